//! Building the projector (connections, migrations, the stream check) and the process around
//! it (ops HTTP endpoints).

use crate::config::Config;
use crate::consumer::LogReader;
use crate::lag::{self, Progress};
use crate::{MIGRATOR, projections};
use anyhow::Context;
use async_nats::jetstream;
use serde_json::json;
use shared::health::Readiness;
use shared::privacy::Keyring;
use shared::serve::BoundRouter;
use shared::shutdown::within_deadline;
use sqlx::PgPool;
use sqlx::postgres::PgPoolOptions;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

/// The event-log consumer that keeps the read models up to date.
pub struct Projector {
    /// Probes `postgres`, `nats` and `projector_lag`.
    pub readiness: Readiness,
    pub(crate) pool: PgPool,
    /// The stream, the subjects and the chunking it reads with.
    pub(crate) reader: LogReader,
    pub(crate) progress: Progress,
    /// Opens the personal fields sealed in the log.
    pub(crate) keyring: Keyring,
    /// How often the leader sweeps rows past retention ([`crate::retention`]).
    pub(crate) retention_every: Duration,
    /// Read models applying a chunk at once ([`projections::Applier`]).
    pub(crate) apply_concurrency: usize,
    /// The log's subjects, with the stream's number of partitions.
    pub(crate) subjects: shared::subjects::Subjects,
    /// `apply_concurrency` slots shared by every partition this process consumes: each read
    /// model's transaction holds one, so the pool always has connections for them.
    pub(crate) slots: Semaphore,
}

/// Pooled connections beside the read models' transactions (which hold a slot each): the
/// short reads of the partitions' consumers and idle checks, parking, the retention sweep, and
/// the lag probe or parked count. The membership and lease sessions are not pooled: a process
/// opens one more connection for its membership, one per partition it holds, and one for
/// trying free partitions.
const POOL_BESIDE_APPLY: u32 = 4;

impl Projector {
    /// Connects PostgreSQL and NATS, applies migrations, and gets or creates the event stream,
    /// refusing to start when the stream is configured differently from what the log needs.
    pub async fn build(config: &Config) -> anyhow::Result<Projector> {
        shared::telemetry::prometheus();
        describe_metrics();
        let pool = PgPoolOptions::new()
            .max_connections(pool_size(config.apply_concurrency))
            .acquire_timeout(Duration::from_secs(5))
            .connect(&config.database_url)
            .await
            .context("connecting to PostgreSQL (DATABASE_URL)")?;
        MIGRATOR
            .run(&pool)
            .await
            .context("applying the projector's migrations")?;

        let shared::nats::Connection { client, reconnects } =
            shared::nats::connect("warden-projector", &config.common.nats_url).await?;
        let event_log = &config.common.event_log;
        let js = jetstream::new(client.clone());
        let shared::nats::EventStream { stream, subjects } =
            shared::nats::open_event_stream(&js, event_log).await?;
        let keyring = config.privacy.keyring(&js, event_log).await?;

        let names = projections::checkpoint_names();
        crate::checkpoint::ensure(&pool, &names, subjects.partitions()).await?;
        let progress = Progress::new(config.stall_after);
        crate::parked::refresh_gauge(&pool).await?;

        let readiness = readiness(&pool, &client, &stream, &subjects, &progress);
        Ok(Projector {
            readiness,
            pool,
            reader: LogReader {
                stream,
                // Each partition's consumer reads its own ([`crate::partitions`]).
                filter_subjects: subjects.all_events(),
                batch_max: config.batch_max.max(1),
                chunk_max_bytes: config.chunk_max_bytes,
                read_ahead: crate::read_ahead::ReadAhead {
                    messages: config.batch_max,
                    bytes: config.read_ahead_bytes,
                }
                .fitting(client.server_info().max_payload),
                batch_wait: config.batch_wait,
                reconnects,
            },
            progress,
            keyring,
            retention_every: config.retention_sweep_every,
            apply_concurrency: config.apply_concurrency.max(1),
            subjects,
            slots: Semaphore::new(config.apply_concurrency.max(1)),
        })
    }
}

/// A pool that holds one connection per concurrent read model, and the others beside them.
pub(crate) fn pool_size(apply_concurrency: usize) -> u32 {
    u32::try_from(apply_concurrency)
        .unwrap_or(u32::MAX)
        .saturating_add(POOL_BESIDE_APPLY)
}

/// The projector's probes; [`Readiness`] bounds each by its timeout, so a PostgreSQL or stream
/// that hangs fails its probe instead of hanging `/readyz`.
fn readiness(
    pool: &PgPool,
    client: &async_nats::Client,
    stream: &jetstream::stream::Stream,
    subjects: &shared::subjects::Subjects,
    progress: &Progress,
) -> Readiness {
    let (stream, progress, lag_pool) = (stream.clone(), progress.clone(), pool.clone());
    let subjects = subjects.clone();
    connectivity(["projector_postgres", "projector_nats"], pool, client).with(
        "projector_lag",
        move || {
            let (stream, progress, pool) = (stream.clone(), progress.clone(), lag_pool.clone());
            let subjects = subjects.clone();
            async move { lag::measure(&stream, &subjects, &progress, &pool).await }
        },
    )
}

/// Probes named `[postgres, nats]`: PostgreSQL answers, and the NATS connection is up (the
/// projector's and the notifier's).
pub(crate) fn connectivity(
    [postgres, nats]: [&'static str; 2],
    pool: &PgPool,
    client: &async_nats::Client,
) -> Readiness {
    let (pool, client) = (pool.clone(), client.clone());
    Readiness::new()
        .with(postgres, move || {
            let pool = pool.clone();
            async move {
                match sqlx::query("SELECT 1").execute(&pool).await {
                    Ok(_) => Ok(json!({})),
                    Err(e) => Err(format!("PostgreSQL unreachable: {e}")),
                }
            }
        })
        .with(nats, move || {
            let state = client.connection_state();
            async move {
                match state {
                    async_nats::connection::State::Connected => Ok(json!({})),
                    other => Err(format!("NATS is {other}")),
                }
            }
        })
}

fn describe_metrics() {
    use metrics::{describe_counter, describe_gauge, describe_histogram};
    crate::retention::describe_metrics();
    describe_counter!(
        "projector_messages_applied_total",
        "Log messages applied, by kind"
    );
    describe_counter!(
        "projector_records_applied_total",
        "Records in applied messages, by kind"
    );
    describe_counter!(
        "projector_parked_total",
        "Log messages parked (unreadable, or refused by PostgreSQL), by reason code"
    );
    describe_gauge!(
        "projector_parked_messages",
        "Rows of parked_messages, by reason code (read from the table)"
    );
    describe_gauge!(
        "projector_oldest_unapplied_age_seconds",
        "Age of the oldest log message not yet applied (0 when caught up)"
    );
    describe_gauge!(
        "projector_stalled",
        "1 while a partition's messages wait and nothing of it was applied for PROJECTOR_STALL_SECONDS"
    );
    describe_histogram!(
        "projector_batch_duration_seconds",
        "Time to apply and commit one chunk"
    );
    describe_counter!(
        "projector_retries_total",
        "Outages (NATS or PostgreSQL) that sent the consumer back to its checkpoint"
    );
    describe_gauge!(
        "projector_lag_messages",
        "Log messages not yet applied, every partition's summed"
    );
    describe_gauge!(
        "projector_partition_lag_messages",
        "Log messages of a partition this process holds after its last committed chunk"
    );
    describe_gauge!(
        "projector_partitions_held",
        "Partitions of the log this process holds and consumes"
    );
    describe_gauge!(
        "projector_leader",
        "1 while this process holds any partition of the log"
    );
    describe_gauge!(
        "projector_applied_sequence",
        "The lowest checkpoint of any partition (every message up to it is applied)"
    );
    describe_gauge!(
        "projector_partition_applied_sequence",
        "Last stream sequence committed in a partition this process holds"
    );
}

/// Applies the migrations to `database_url` and returns (the `migrate` subcommand).
pub async fn migrate(database_url: &str) -> anyhow::Result<()> {
    let pool = PgPoolOptions::new()
        .max_connections(1)
        .connect(database_url)
        .await
        .context("connecting to PostgreSQL (DATABASE_URL)")?;
    MIGRATOR.run(&pool).await.context("applying migrations")?;
    pool.close().await;
    Ok(())
}

/// The projector process: the consumer plus its ops endpoints.
pub struct App {
    projector: Projector,
    ops: BoundRouter,
}

impl App {
    /// Builds the projector and binds `bind_addr` (port 0 picks a free port).
    pub async fn build(config: Config) -> anyhow::Result<App> {
        let projector = Projector::build(&config).await?;
        let readiness = projector.readiness.clone();
        let ops = BoundRouter::bind(
            config.bind_addr,
            axum::Router::new(),
            readiness,
            config.common.serve,
        )
        .await?;
        Ok(App { projector, ops })
    }

    /// Where the ops endpoints listen.
    pub fn local_addr(&self) -> SocketAddr {
        self.ops.local_addr()
    }

    /// Projects and serves `/healthz`, `/readyz` and `/metrics` until `shutdown`; when either
    /// half fails, the other is stopped too. Once stopping, both get the shutdown deadline
    /// ([`shared::shutdown::SHUTDOWN_DEADLINE`]) to finish.
    pub async fn run_until_stopped(self, shutdown: CancellationToken) -> anyhow::Result<()> {
        let projector = self.projector;
        run_beside_ops("the projector", self.ops, shutdown, |stop| {
            projector.run(stop)
        })
        .await
    }
}

/// Runs `work` and serves `ops` until `shutdown`; when either half fails, the other is stopped
/// too. Once stopping, both get the shutdown deadline to finish (the projector's and the
/// notifier's process).
pub(crate) async fn run_beside_ops<F, Fut>(
    what: &str,
    ops: BoundRouter,
    shutdown: CancellationToken,
    work: F,
) -> anyhow::Result<()>
where
    F: FnOnce(CancellationToken) -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<()>>,
{
    let stop = shutdown.child_token();
    let serving = ops.serve(stop.clone());
    let working = work(stop.clone());
    let running = async {
        let (worked, served) = tokio::join!(
            async {
                let result = working.await;
                stop.cancel();
                result
            },
            async {
                let result = serving.await;
                stop.cancel();
                result
            }
        );
        worked?;
        served.context("serving the ops endpoints")?;
        Ok(())
    };
    within_deadline(what, &stop, running).await
}
