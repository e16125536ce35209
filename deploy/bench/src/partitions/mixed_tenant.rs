//! The mixed tenant: one account's large backlog lands in the log at once (published raw on its
//! partition's subjects, as fast as JetStream takes it) while a second account, in another
//! partition, writes one event through ingest every [`WRITE_EVERY`]; each of those must be in
//! the read model (the `events` table) within 1 s of its 202 (p99) while the backlog is being
//! applied. One projector process holds every partition, as a single-process deployment does.

use super::{checkpoints, env_on, fresh_stream, publish};
use crate::children::ServiceProcess;
use crate::data::{mixed_log_message, uuids};
use crate::raw::Outgoing;
use crate::run::{Bench, phase};
use crate::serve::Service;
use crate::setup::{drop_database, fresh_database};
use crate::stats::{Latencies, Measurement};
use anyhow::Context;
use rand::SeedableRng;
use rand::rngs::StdRng;
use shared::subjects::Subjects;
use sqlx::PgPool;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tokio::task::JoinSet;
use uuid::Uuid;

/// The quiet account's writes: POST 202 -> readable in `events`, while the backlog applies.
pub(crate) const NAME: &str = "mixed_tenant_write_readable";
/// The busy account's backlog: published to applied.
const BACKLOG: &str = "mixed_tenant_backlog";
/// How often the quiet account writes.
const WRITE_EVERY: Duration = Duration::from_millis(100);
/// How often a write's row is looked for.
const POLL_EVERY: Duration = Duration::from_millis(10);

const STREAM: &str = "BENCH_MIXED";
const PREFIX: &str = "benchmix";
const DATABASE: &str = "warden_bench_mixed";

/// The quiet account, writing through ingest and reading the read model.
struct Quiet {
    http: reqwest::Client,
    ingest_url: String,
    key: String,
    account: Uuid,
    pool: PgPool,
}

impl Quiet {
    /// Posts one event; returns the time from its 202 until its row is in `events`.
    async fn write_and_read(&self) -> anyhow::Result<Duration> {
        let body = serde_json::json!({"player_uuid": Uuid::new_v4(), "name": "quiet_write"});
        let response = self
            .http
            .post(format!("{}/api/v1/plugin/events", self.ingest_url))
            .bearer_auth(&self.key)
            .json(&body)
            .send()
            .await?;
        anyhow::ensure!(response.status() == 202, "answered {}", response.status());
        let accepted = Instant::now();
        let answer: serde_json::Value = response.json().await?;
        let id: Uuid = answer["id"]
            .as_str()
            .context("the 202 names the event's id")?
            .parse()?;
        loop {
            let readable: bool = sqlx::query_scalar(
                "SELECT EXISTS (SELECT 1 FROM events WHERE account_id = $1 AND id = $2)",
            )
            .bind(self.account)
            .bind(id)
            .fetch_one(&self.pool)
            .await?;
            if readable {
                return Ok(accepted.elapsed());
            }
            anyhow::ensure!(
                accepted.elapsed() < Duration::from_secs(60),
                "not readable within 60 s"
            );
            tokio::time::sleep(POLL_EVERY).await;
        }
    }
}

/// What the quiet account saw.
#[derive(Default)]
struct Seen {
    /// Writes sent while the backlog was being applied: 202 -> readable.
    during: Latencies,
    /// Writes sent once it was applied.
    after: usize,
    errors: u64,
}

/// Runs the measurement and adds it, the backlog's rate and a note to the report.
pub(super) async fn measure(b: &mut Bench) -> anyhow::Result<()> {
    let log = fresh_stream(&b.js, STREAM, PREFIX).await?;
    // This run made the stream, so its partitions are the configured ones.
    let subjects = log.subjects();
    let url = fresh_database(&b.pg_url, DATABASE).await?;
    let pool = PgPool::connect(&url).await?;
    let env = env_on(b, &log, &url);
    let projector = ServiceProcess::start_logging_to(
        Service::Projector,
        &env,
        &b.log_dir.join(format!("projector-{STREAM}.log")),
    )
    .await?;
    let ingest = ServiceProcess::start_logging_to(
        Service::Ingest,
        &env,
        &b.log_dir.join(format!("ingest-{STREAM}.log")),
    )
    .await?;
    let account = b.admin.account("bench quiet tenant").await?;
    let key = b.admin.keys(account, "plugin", 1).await?.remove(0);
    let quiet = Arc::new(Quiet {
        http: b.http.clone(),
        ingest_url: ingest.base_url.clone(),
        key,
        account,
        pool: pool.clone(),
    });
    // The path works before the clock starts (and the key has reached ingest).
    let deadline = Instant::now() + Duration::from_secs(30);
    while let Err(error) = quiet.write_and_read().await {
        anyhow::ensure!(
            Instant::now() < deadline,
            "the quiet account's writes never became readable: {error:#}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let busy = std::iter::repeat_with(Uuid::new_v4)
        .find(|a| subjects.partition_of(*a) != subjects.partition_of(account))
        .context("an account in another partition")?;
    let busy_partition = subjects.partition_of(busy);

    let (records, messages) = backlog(b, &subjects, busy);
    let message_count = messages.len();
    phase(&format!(
        "mixed tenant: a backlog of {records} records for one account while another writes \
         every {} ms",
        WRITE_EVERY.as_millis()
    ));
    let cpu = b.cpu(&[&projector, &ingest]);
    let applying = Arc::new(AtomicBool::new(true));
    let writer = tokio::spawn(quiet_writes(quiet.clone(), applying.clone()));
    let started = Instant::now();
    let published = publish(&b.js, &log, messages).await;
    let applied = match &published {
        Ok(_) => backlog_applied(b, &pool, &subjects, busy_partition, started).await,
        Err(_) => Err(anyhow::anyhow!("the backlog was not published")),
    };
    applying.store(false, Ordering::Relaxed);
    let seen = writer.await?;
    let cpu = cpu.since();
    projector.stop().await;
    ingest.stop().await;
    pool.close().await;
    drop_database(&b.pg_url, DATABASE).await?;
    b.js.delete_stream(STREAM).await.ok();
    let published_in = published?;
    let (applied_in, progress) = applied?;

    let what = format!(
        "one account's single events through ingest, one every {} ms, each timed from its 202 \
         until its row is in the read model (events), while another account's backlog of \
         {records} records ({message_count} log messages, published at once on its own \
         partition) is applied by one projector process",
        WRITE_EVERY.as_millis()
    );
    let count = seen.during.len() as u64;
    b.report.measurements.push(Measurement::new(
        NAME,
        &what,
        "writes",
        count,
        applied_in,
        Some(&seen.during),
        seen.errors,
    ));
    b.report.measurements.push(Measurement::new(
        BACKLOG,
        "the mixed tenant's backlog: from the start of its publish until its partition's \
         checkpoints reach its last message",
        "records",
        records,
        applied_in,
        None,
        0,
    ));
    let note = format!(
        "busy account in partition {busy_partition}, quiet one in partition {}; backlog \
         published in {:.2} s, applied in {:.2} s; checkpoint of the busy partition by time: \
         {progress}; {count} quiet writes during the backlog, {} after it, {} failed; {cpu}",
        subjects.partition_of(account),
        published_in.as_secs_f64(),
        applied_in.as_secs_f64(),
        seen.after,
        seen.errors
    );
    b.note(NAME, note);
    Ok(())
}

/// The busy account's backlog: mixed log messages up to `mixed_backlog_records` records.
fn backlog(b: &Bench, subjects: &Subjects, account: Uuid) -> (u64, Vec<Outgoing>) {
    let mut rng = StdRng::seed_from_u64(23);
    let servers = uuids(20);
    let mut messages = Vec::new();
    let mut records = 0;
    while records < b.plan.mixed_backlog_records {
        let (message, count) = mixed_log_message(&mut rng, account, &servers, &b.players);
        records += count;
        messages.push(Outgoing::of(subjects, &message));
    }
    (records as u64, messages)
}

/// Writes every [`WRITE_EVERY`] (each write in a task of its own, so a slow one delays no
/// other) until `applying` turns false, then waits for every write to be read.
async fn quiet_writes(quiet: Arc<Quiet>, applying: Arc<AtomicBool>) -> Seen {
    let mut ticks = tokio::time::interval(WRITE_EVERY);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut writes = JoinSet::new();
    while applying.load(Ordering::Relaxed) {
        ticks.tick().await;
        let quiet = quiet.clone();
        let during = applying.load(Ordering::Relaxed);
        writes.spawn(async move { (during, quiet.write_and_read().await) });
    }
    let mut seen = Seen::default();
    while let Some(done) = writes.join_next().await {
        match done {
            Ok((true, Ok(latency))) => seen.during.push(latency),
            Ok((false, Ok(_))) => seen.after += 1,
            _ => seen.errors += 1,
        }
    }
    seen
}

/// Waits until the busy partition's checkpoints reach its last message (published by now);
/// returns the time since `started` and the checkpoint's progress, sampled each second.
async fn backlog_applied(
    b: &Bench,
    pool: &PgPool,
    subjects: &Subjects,
    partition: u16,
    started: Instant,
) -> anyhow::Result<(Duration, String)> {
    let stream = b.js.get_stream(STREAM).await?;
    let heads = shared::nats::partition_heads(&stream, subjects).await?;
    let head = heads.get(usize::from(partition)).copied().unwrap_or(0);
    let mut samples = Vec::new();
    let mut next_sample = Instant::now();
    loop {
        let at = checkpoints(pool, subjects.partitions())
            .await?
            .get(usize::from(partition))
            .copied()
            .flatten()
            .unwrap_or(0);
        if Instant::now() >= next_sample {
            samples.push(format!(
                "{:.0} s {:.0}%",
                started.elapsed().as_secs_f64(),
                100.0 * at as f64 / head.max(1) as f64
            ));
            next_sample += Duration::from_secs(1);
        }
        if at >= head {
            let applied_in = started.elapsed();
            // At most a dozen samples in the note, evenly spread.
            let step = samples.len().div_ceil(12).max(1);
            let shown: Vec<&str> = samples.iter().step_by(step).map(String::as_str).collect();
            return Ok((applied_in, shown.join(", ")));
        }
        anyhow::ensure!(
            started.elapsed() < Duration::from_secs(3600),
            "the backlog was not applied within an hour"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}
