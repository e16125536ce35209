//! The rebuild targets, on a log and database of their own: the bench's mixed backlog
//! (70% chat / 20% custom events / 10% joins and quits, `backlog_records` records) projected by
//! a live projector process, then rebuilt by `projector::rebuild::rebuild` in this process
//! while that projector keeps running and readers read the tables like the dashboard; then
//! the baseline: the same rows bulk-loaded with raw binary `COPY` ([`raw_copy`]).
//!
//! Reported: the whole rebuild's and its load phase's records/s, each phase's time (from the
//! rebuild's progress channel, [`timeline`]), the swap, the readers' failed and empty reads,
//! and how well the load's ETA held.

mod raw_copy;
mod readers;
mod timeline;

use crate::children::ServiceProcess;
use crate::partitions::{fresh_stream, wait_heads};
use crate::projection::{last_sequence, top_up_backlog};
use crate::run::{Bench, phase};
use crate::serve::Service;
use crate::setup::{drop_database, fresh_database};
use crate::stats::{Latencies, Measurement};
use anyhow::Context;
use projector::rebuild::{Progress, RebuildOptions, RebuildReport};
use shared::config::Vars;
use sqlx::PgPool;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// The whole rebuild: the backlog's records over the rebuild's time.
pub(crate) const NAME: &str = "rebuild";
/// Its load phase alone.
pub(crate) const LOAD: &str = "rebuild_load_phase";
/// The swap transaction (its duration is the p50/p99).
pub(crate) const SWAP: &str = "rebuild_swap";
/// The readers' reads during the rebuild (failed and empty ones are its errors).
pub(crate) const READS: &str = "rebuild_reads";
/// Baseline: raw binary `COPY` of the same rows into unindexed unlogged tables.
pub(crate) const RAW_COPY_LOAD: &str = "raw_copy_load";
/// Baseline: that, then `SET LOGGED` and the live tables' indexes.
pub(crate) const RAW_COPY_READY: &str = "raw_copy_indexed";
/// `Report::figures` key: the load ETA's worst relative error, in percent.
pub(crate) const ETA_ERROR: &str = "rebuild_load_eta_worst_error_pct";

/// The backlog's own stream, subject prefix and database.
/// The rebuild's peak RSS over what this process held before it, in `memory_mib`.
pub(crate) const MEMORY: &str = "projector rebuild: peak over the process's RSS before it";
const STREAM: &str = "BENCH_REBUILD";
const PREFIX: &str = "benchrb";
const DATABASE: &str = "warden_bench_rebuild";
/// Readers during the rebuild (a couple: the rebuild is measured on the same two cores).
const READERS: usize = 2;
/// Longer than any rebuild of the plan's backlog on a slow build.
const LIMIT: Duration = Duration::from_secs(3600);

/// What the rebuild did and what was seen meanwhile.
struct Rebuilt {
    report: RebuildReport,
    /// How long the live database's `VACUUM (ANALYZE)` took before the rebuild.
    settled: Duration,
    timeline: timeline::Timeline,
    reads: readers::Reads,
    cpu: String,
    /// Its peak RSS over this process's before it, when the kernel let the peak be reset.
    memory_mib: Option<f64>,
}

/// Publishes the backlog, has a live projector apply it, rebuilds it beside that projector,
/// then measures the raw `COPY` baseline on the rebuilt tables.
pub(crate) async fn measure(b: &mut Bench) -> anyhow::Result<()> {
    let log = fresh_stream(&b.js, STREAM, PREFIX).await?;
    let subjects = log.subjects();
    phase(&format!(
        "rebuild: mixed backlog of {} records",
        b.plan.backlog_records
    ));
    let records = top_up_backlog(
        &b.js,
        STREAM,
        &subjects,
        b.account,
        &b.players,
        b.plan.backlog_records,
    )
    .await? as u64;
    let messages = last_sequence(&b.js, STREAM).await?;
    let stream = b.js.get_stream(STREAM).await?;
    let heads = shared::nats::partition_heads(&stream, &subjects).await?;
    let url = fresh_database(&b.pg_url, DATABASE).await?;
    let pool = PgPool::connect(&url).await?;
    let env = b.env_on(STREAM, PREFIX, &url);

    phase("rebuild: the live projector catches up");
    let live_log = b.log_dir.join(format!("projector-{STREAM}.log"));
    let projector = ServiceProcess::start_logging_to(Service::Projector, &env, &live_log).await?;
    let rebuilt = rebuild_beside(b, &env, &pool, &heads, &projector).await;
    projector.stop().await;
    let rebuilt = rebuilt?;

    let tables: Vec<&str> = rebuilt
        .report
        .models
        .iter()
        .flat_map(|m| m.tables())
        .copied()
        .collect();
    phase(&format!(
        "rebuild baseline: raw binary COPY of the rebuilt rows ({} tables)",
        tables.len()
    ));
    let raw = raw_copy::measure(&url, &tables).await?;
    anyhow::ensure!(raw.rows > 0, "the rebuilt tables hold no rows");
    pool.close().await;
    drop_database(&b.pg_url, DATABASE).await?;
    // Its messages are on disk until the run ends otherwise; a missing stream is fine.
    b.js.delete_stream(STREAM).await.ok();

    add(b, records, messages, &rebuilt, &raw);
    Ok(())
}

/// Waits for the live projector to apply the backlog, then rebuilds every read model in this
/// process while it runs and readers read; watches the progress channel throughout.
async fn rebuild_beside(
    b: &Bench,
    env: &[(&'static str, String)],
    pool: &PgPool,
    heads: &[u64],
    projector: &ServiceProcess,
) -> anyhow::Result<Rebuilt> {
    wait_heads(pool, heads, LIMIT).await?;
    // The live tables were loaded seconds ago: autovacuum would vacuum and analyze them
    // during the rebuild's first tens of seconds, slowing its start and not its end (the load's
    // ETA then judges a machine that changes under it). A live database at steady state has
    // that behind it, so it is done here, before the clock starts.
    let settling = Instant::now();
    sqlx::query("VACUUM (ANALYZE)").execute(pool).await?;
    let settled = settling.elapsed();
    readers::check(pool, b.account).await?;
    let vars = env
        .iter()
        .fold(Vars::empty(), |vars, (name, value)| vars.set(name, value));
    let config = projector::Config::from_vars(&vars)?;

    phase("rebuild: every read model, beside the live projector and readers");
    let (sender, receiver) = tokio::sync::watch::channel(Progress::default());
    let stop = CancellationToken::new();
    let samples = timeline::record(receiver, stop.clone());
    let reading = readers::start(pool, b.account, READERS, &stop);
    let options = RebuildOptions {
        progress_bar: false,
        progress: Some(sender),
        ..RebuildOptions::default()
    };
    let cpu = b.cpu(&[projector]);
    // The rebuild runs in this process: its memory is this process's peak over what it held
    // before (the load generator's own, the readers').
    let before = crate::children::own_rss_mib();
    let reset = crate::children::reset_own_peak_rss();
    let result = tokio::time::timeout(
        LIMIT,
        projector::rebuild::rebuild(&config, &options, CancellationToken::new()),
    )
    .await;
    let memory_mib = match (reset, before, crate::children::own_peak_rss_mib()) {
        (true, Some(before), Some(peak)) => Some(peak - before),
        _ => None,
    };
    let end = Instant::now();
    let cpu = cpu.since();
    stop.cancel();
    let reads = readers::finish(reading).await?;
    let samples = samples.await?;
    let report = result.with_context(|| format!("the rebuild took longer than {LIMIT:?}"))??;
    Ok(Rebuilt {
        report,
        settled,
        timeline: timeline::Timeline::of(&samples, end),
        reads,
        cpu,
        memory_mib,
    })
}

/// Adds the measurements, the ETA's error and the notes.
fn add(b: &mut Bench, records: u64, messages: u64, rebuilt: &Rebuilt, raw: &raw_copy::RawCopy) {
    let Rebuilt {
        report,
        settled,
        timeline,
        reads,
        cpu,
        memory_mib,
    } = rebuilt;
    if let Some(mib) = memory_mib {
        b.report.memory_mib.insert(MEMORY.to_owned(), *mib);
    }
    let backlog = format!(
        "the mixed backlog ({records} records in {messages} log messages: 70% chat / 20% \
         custom-event / 10% join-quit batches; stream {STREAM})"
    );
    let mut push = |name: &str,
                    what: String,
                    unit: &str,
                    count: u64,
                    took: Duration,
                    latencies: Option<&Latencies>,
                    errors: u64| {
        b.report.measurements.push(Measurement::new(
            name, &what, unit, count, took, latencies, errors,
        ));
    };
    push(
        NAME,
        format!(
            "{backlog} rebuilt by projector::rebuild in this process (every read model from \
             the start of the log into fresh tables, swapped in) while the live projector \
             runs and {READERS} readers read; prepare to swap"
        ),
        "records",
        records,
        report.elapsed,
        None,
        0,
    );
    if let Some(load) = timeline.load_time() {
        push(
            LOAD,
            "the same rebuild's load phase alone (from its progress channel: the change to \
             load until the change to the next phase)"
                .to_owned(),
            "records",
            records,
            load,
            None,
            0,
        );
    }
    let mut swap = Latencies::default();
    swap.push(report.swap);
    push(
        SWAP,
        "the rebuild's swap transaction (p50 = p99 = its duration)".to_owned(),
        "swaps",
        1,
        report.swap,
        Some(&swap),
        0,
    );
    push(
        READS,
        format!(
            "{READERS} readers during the rebuild, each in turn: a chatlog page, a player \
             list, the timeline, sessions of the backlog's account; a failed or empty read \
             is an error"
        ),
        "requests",
        reads.latencies.len() as u64,
        report.elapsed,
        Some(&reads.latencies),
        reads.failed + reads.empty,
    );
    let raw_what = |what: &str| {
        format!(
            "baseline: the rebuilt tables' {} rows ({} MiB of binary COPY data, read out \
             before the clock) loaded with COPY FROM STDIN (FORMAT binary) into new unlogged \
             tables without indexes in a scratch schema, {} connections at once{what}; \
             records are the backlog's",
            raw.rows,
            raw.bytes >> 20,
            raw.connections
        )
    };
    push(
        RAW_COPY_LOAD,
        raw_what(""),
        "records",
        records,
        raw.load,
        None,
        0,
    );
    push(
        RAW_COPY_READY,
        raw_what(&format!(
            ", then SET LOGGED and the live tables' {} indexes",
            raw.indexes
        )),
        "records",
        records,
        raw.ready,
        None,
        0,
    );
    if let Some((error, _)) = timeline.eta_worst {
        b.report.figures.insert(ETA_ERROR.to_owned(), error * 100.0);
    }
    let load = timeline.load_time().map_or("not seen".to_owned(), |load| {
        format!("{:.0} records/s", records as f64 / load.as_secs_f64())
    });
    b.note(
        NAME,
        format!(
            "live database vacuumed and analyzed before the rebuild in {:.1} s (not timed); \
             phases: {}; load phase {load}; swap {:.1} ms; load ETA judged on {} sample(s) \
             between 10% and 90% of the load's bytes and before its last tenth of time ({} \
             progress values seen; the worst {}; worst error up to the load's end {}): {}; \
             transactions over chunks, per model: {}; CPU: {cpu}",
            settled.as_secs_f64(),
            timeline.describe(),
            report.swap.as_secs_f64() * 1000.0,
            timeline.eta_samples,
            timeline.samples,
            timeline
                .eta_worst
                .map_or("-".to_owned(), |(_, (share, into, predicted, actual))| {
                    format!(
                        "at {:.0}%, {into:.1} s in: {predicted:.1} s left predicted, {actual:.1} s \
                     actual",
                        share * 100.0
                    )
                }),
            timeline
                .eta_worst_error_to_the_end
                .map_or("-".to_owned(), |e| format!("{:.0}%", e * 100.0)),
            timeline.describe_eta(),
            report
                .transactions
                .iter()
                .map(|t| format!("{} {}/{}", t.model, t.transactions, t.chunks))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    );
    b.note(
        RAW_COPY_READY,
        format!(
            "load {:.2} s, SET LOGGED {:.2} s, {} indexes {:.2} s",
            raw.load.as_secs_f64(),
            (raw.logged - raw.load).as_secs_f64(),
            raw.indexes,
            (raw.ready - raw.logged).as_secs_f64()
        ),
    );
    b.note(
        READS,
        format!(
            "{} reads, {} failed, {} empty{}",
            reads.latencies.len() as u64 + reads.failed + reads.empty,
            reads.failed,
            reads.empty,
            reads
                .first_error
                .as_ref()
                .map_or(String::new(), |e| format!("; first failure: {e}"))
        ),
    );
}
