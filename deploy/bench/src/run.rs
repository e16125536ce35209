//! The whole benchmark, phase by phase, in an order where each phase leaves the next what it
//! needs (the ingest phases fill the log the projector then catches up on; query-api's memory
//! with open streams is read before the read phase touches the large dataset).

use crate::children::{ServiceProcess, own_peak_rss_mib};
use crate::data::uuids;
use crate::plan::Plan;
use crate::report::Report;
use crate::serve::Service;
use crate::setup::{Admin, fresh_database};
use crate::{
    alerts, partitions, privacy_cost, read_phases, rebuild, search_phases, verdict, write_phases,
};
use async_nats::jetstream;
use shared::config::Vars;
use shared::event_log::EventLogConfig;
use shared::privacy::{Keyring, PrivacyConfig};
use sqlx::PgPool;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use uuid::Uuid;

/// The private servers `deploy/bench.sh` started.
pub(crate) struct Servers {
    /// nats-server with `sync_interval: always`.
    pub(crate) nats_url: String,
    /// PostgreSQL superuser URL without a database.
    pub(crate) pg_url: String,
}

/// What every phase shares.
pub(crate) struct Bench {
    /// Sizes and durations.
    pub(crate) plan: Plan,
    /// What has been measured so far.
    pub(crate) report: Report,
    /// The load generator's HTTP client.
    pub(crate) http: reqwest::Client,
    /// The admin API, for accounts and keys.
    pub(crate) admin: Admin,
    /// The account the write phases use.
    pub(crate) account: Uuid,
    /// Player ids the generated records use.
    pub(crate) players: Arc<Vec<Uuid>>,
    /// JetStream, for the baselines and the backlog.
    pub(crate) js: jetstream::Context,
    /// Opens the services' sealed log messages.
    pub(crate) keyring: Keyring,
    /// The event log's settings (the services' defaults).
    pub(crate) log: EventLogConfig,
    /// The services' environment.
    pub(crate) env: Vec<(&'static str, String)>,
    /// Where the services' logs go.
    pub(crate) log_dir: PathBuf,
    /// The services' database.
    pub(crate) svc_pool: PgPool,
    /// PostgreSQL's superuser URL without a database, for scratch databases.
    pub(crate) pg_url: String,
    /// The scratch database of the raw baselines (same schema).
    pub(crate) raw_pool: PgPool,
    /// nats-server's and PostgreSQL's pids, when bench.sh says them.
    pub(crate) server_pids: Vec<(&'static str, u32)>,
}

impl Bench {
    /// The services' environment, pointed at the stream `stream` (subjects under `prefix`) and
    /// the database at `database_url`: for the phases on a log and database of their own.
    pub(crate) fn env_on(
        &self,
        stream: &str,
        prefix: &str,
        database_url: &str,
    ) -> Vec<(&'static str, String)> {
        let mut env: Vec<(&'static str, String)> = self
            .env
            .iter()
            .filter(|(key, _)| !matches!(*key, "DATABASE_URL" | "EVENT_STREAM" | "SUBJECT_PREFIX"))
            .cloned()
            .collect();
        env.push(("DATABASE_URL", database_url.to_owned()));
        env.push(("EVENT_STREAM", stream.to_owned()));
        env.push(("SUBJECT_PREFIX", prefix.to_owned()));
        env
    }

    /// A CPU snapshot of the servers, this process and `services`.
    pub(crate) fn cpu(&self, services: &[&ServiceProcess]) -> crate::cpu::CpuSnapshot {
        let mut processes: Vec<(&str, u32)> = services
            .iter()
            .map(|s| (s.service.name(), s.pid()))
            .collect();
        processes.push(("warden-bench (load)", std::process::id()));
        processes.extend(self.server_pids.iter().map(|(name, pid)| (*name, *pid)));
        crate::cpu::CpuSnapshot::take(&processes)
    }

    /// Adds a note about `measurement`.
    pub(crate) fn note(&mut self, measurement: &str, text: String) {
        self.report.notes.push(format!("{measurement}: {text}"));
    }

    /// Starts `service` as a child process with the services' environment.
    pub(crate) async fn start(&self, service: Service) -> anyhow::Result<ServiceProcess> {
        ServiceProcess::start(service, &self.env, &self.log_dir).await
    }

    /// Records `process`'s peak RSS under `label`.
    pub(crate) fn memory(&mut self, label: &str, process: &ServiceProcess) {
        if let Some(mib) = process.peak_rss_mib() {
            let key = format!("{}: {label}", process.service.name());
            self.report.memory_mib.insert(key, mib);
        }
    }
}

/// A subset of the phases, to rerun one side after a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Phases {
    /// Ingest, projector and their baselines.
    Writes,
    /// POST -> live stream, open streams, reads on the large dataset, the dashboard, sign-in.
    Reads,
    /// The search targets alone: the chat trigram index's cost to the projector (on a
    /// backlog of its own), chat keyword search and player search.
    Search,
    /// The alerts target alone: plugin write -> signed webhook at a local receiver.
    Alerts,
    /// The privacy target alone: durable ingest (and the projector's catch-up) with personal
    /// fields sealed, against the same in clear.
    Privacy,
    /// The partition targets alone: two projector processes against one on the
    /// partitioned log, and the mixed tenant (one account's backlog, another's writes).
    Partitions,
    /// The rebuild targets alone: the mixed backlog rebuilt beside the live projector
    /// and readers, against raw binary `COPY` of the same rows.
    Rebuild,
}

/// Prints which phase starts.
pub(crate) fn phase(name: &str) {
    eprintln!("==> bench: {name}");
}

/// Runs every phase, writes `out` and prints the table.
pub(crate) async fn run(
    plan: Plan,
    only: Option<Phases>,
    out: &Path,
    servers: Servers,
) -> anyhow::Result<()> {
    let report = Report {
        mode: plan.mode.into(),
        machine: verdict::machine(),
        ..Report::default()
    };
    let log_dir = out.parent().unwrap_or(Path::new(".")).join("logs");
    std::fs::create_dir_all(&log_dir)?;
    let svc_url = fresh_database(&servers.pg_url, "warden_bench").await?;
    let raw_url = fresh_database(&servers.pg_url, "warden_bench_raw").await?;
    let admin_key = format!(
        "wdn_admin_{}{}",
        Uuid::new_v4().simple(),
        Uuid::new_v4().simple()
    );
    let env = vec![
        ("NATS_URL", servers.nats_url.clone()),
        ("DATABASE_URL", svc_url.clone()),
        ("ADMIN_KEY", admin_key.clone()),
        ("IP_HASH_KEY", Uuid::new_v4().simple().to_string()),
        ("LOG_FORMAT", "pretty".to_owned()),
        // The sign-in measurement comes from many client addresses through loopback, as
        // through the stack's reverse proxy, so the per-IP sign-in quota does not throttle it.
        ("TRUSTED_PROXIES", "127.0.0.1".to_owned()),
        // Webhook secrets are sealed at rest (query-api) and opened to sign (the notifier);
        // the alerts phase's receiver listens on loopback, which the policy refuses unless
        // allowed.
        (
            "WEBHOOK_SECRETS_KEY",
            Uuid::new_v4().simple().to_string().repeat(2),
        ),
        ("WEBHOOK_ALLOW_NETWORKS", "loopback".to_owned()),
        // Every service seals or opens personal fields with keys wrapped by this one (issue
        // 18); sealing stays on (the default), as in the stack.
        (
            "PRIVACY_MASTER_KEY",
            Uuid::new_v4().simple().to_string().repeat(2),
        ),
    ];
    let query = ServiceProcess::start(Service::QueryApi, &env, &log_dir).await?;
    let ingest = ServiceProcess::start(Service::Ingest, &env, &log_dir).await?;
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(4096)
        .timeout(Duration::from_secs(60))
        .build()?;
    let admin = Admin {
        base_url: query.base_url.clone(),
        admin_key,
        http: http.clone(),
    };
    let account = admin.account("bench").await?;
    let js = jetstream::new(async_nats::connect(&servers.nats_url).await?);
    let log = EventLogConfig::default();
    // The bench opens the services' sealed log messages (the raw-insert baseline) with the
    // services' own master key and buckets.
    let master_key = env
        .iter()
        .find(|(name, _)| *name == "PRIVACY_MASTER_KEY")
        .map(|(_, value)| value.clone())
        .unwrap_or_default();
    let keyring = PrivacyConfig::from_vars(&Vars::empty().set("PRIVACY_MASTER_KEY", master_key))?
        .keyring(&js, &log)
        .await?;
    let mut bench = Bench {
        players: Arc::new(uuids(plan.dataset_players)),
        plan,
        report,
        http,
        admin,
        account,
        js,
        log,
        keyring,
        env,
        log_dir,
        svc_pool: PgPool::connect(&svc_url).await?,
        pg_url: servers.pg_url.clone(),
        raw_pool: PgPool::connect(&raw_url).await?,
        server_pids: [
            ("nats-server", "BENCH_NATS_PID"),
            ("postgres", "BENCH_PG_PID"),
        ]
        .into_iter()
        .filter_map(|(name, var)| Some((name, std::env::var(var).ok()?.trim().parse().ok()?)))
        .collect(),
    };

    let projector = if matches!(only, None | Some(Phases::Writes)) {
        Some(write_phases::run(&mut bench, &ingest).await?)
    } else {
        None
    };
    let open = if matches!(only, None | Some(Phases::Reads)) {
        read_phases::run(&mut bench, &query, &ingest, projector.as_ref()).await?
    } else {
        0
    };
    if only == Some(Phases::Search) {
        search_phases::only(&mut bench, &query).await?;
    }
    if matches!(only, None | Some(Phases::Alerts)) {
        alerts::measure(&mut bench, &ingest).await?;
    }
    if matches!(only, None | Some(Phases::Privacy)) {
        privacy_cost::measure(&mut bench).await?;
    }
    if matches!(only, None | Some(Phases::Partitions)) {
        partitions::measure(&mut bench).await?;
    }
    if matches!(only, None | Some(Phases::Rebuild)) {
        rebuild::measure(&mut bench).await?;
    }
    if let Some(phases) = only {
        let phases = format!("{phases:?}").to_lowercase();
        bench.report.notes.push(format!(
            "only the {phases} phases were run (--only {phases}); the other targets are skipped"
        ));
        bench.report.only = Some(phases);
    }

    bench.memory("whole run", &query);
    bench.memory("whole run", &ingest);
    if let Some(projector) = &projector {
        bench.memory("whole run", projector);
    }
    if let Some(own) = own_peak_rss_mib() {
        let key = "warden-bench itself (load generator)".to_owned();
        bench.report.memory_mib.insert(key, own);
    }
    for process in [Some(query), Some(ingest), projector].into_iter().flatten() {
        process.stop().await;
    }
    let mut report = bench.report;
    verdict::targets(&mut report, &bench.plan, open);
    report.write(out)?;
    println!("{}", report.table());
    println!("report: {}", out.display());
    Ok(())
}
