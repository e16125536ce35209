//! Two projector processes against one on the partitioned log: a mixed backlog of many
//! accounts (so every partition has work) in a stream of its own, caught up into a fresh
//! database by one process, and by two started together; the two sides alternate, the best
//! catch-up of each counts.
//!
//! Measured twice: with one read-model transaction at a time per process
//! (`PROJECTOR_APPLY_CONCURRENCY=1`, the target: what a second process adds when the first
//! leaves room, as a process on another machine would find), and with the default four, where
//! one process already keeps a 2-core machine's PostgreSQL busy (reported beside it).

use super::{env_on, fresh_stream, publish, wait_heads};
use crate::children::ServiceProcess;
use crate::data::{mixed_log_message, uuids};
use crate::raw::Outgoing;
use crate::run::{Bench, phase};
use crate::serve::Service;
use crate::setup::{drop_database, fresh_database};
use crate::stats::Measurement;
use rand::SeedableRng;
use rand::rngs::StdRng;
use shared::subjects::Subjects;
use sqlx::PgPool;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use uuid::Uuid;

/// The catch-up by one projector process applying one read model at a time.
pub(crate) const ONE: &str = "projector_catch_up_1_process";
/// The catch-up by two such projector processes sharing the partitions.
pub(crate) const TWO: &str = "projector_catch_up_2_processes";
/// [`ONE`] with the default apply concurrency.
pub(crate) const ONE_DEFAULT: &str = "projector_catch_up_1_process_default";
/// [`TWO`] with the default apply concurrency.
pub(crate) const TWO_DEFAULT: &str = "projector_catch_up_2_processes_default";

/// The apply concurrency of the target's processes.
const BOUND_CONCURRENCY: usize = 1;

/// The backlog's own stream and subject prefix (nothing else publishes there).
const STREAM: &str = "BENCH_PARTITIONS";
const PREFIX: &str = "benchpart";

/// One catch-up: how long it took, where the CPU went, and the timeline rows it wrote.
struct Run {
    elapsed: Duration,
    cpu: String,
    rows: i64,
}

/// Publishes the backlog, catches it up `partition_rounds` times per side, and adds each
/// side's best catch-up with a note of every run and its CPU.
pub(super) async fn measure(b: &mut Bench) -> anyhow::Result<()> {
    let rounds = b.plan.partition_rounds.max(1);
    let log = fresh_stream(&b.js, STREAM, PREFIX).await?;
    // This run made the stream, so its partitions are the configured ones.
    let subjects = log.subjects();
    let accounts = uuids(b.plan.partition_accounts);
    phase(&format!(
        "partitioned backlog of {} records over {} accounts",
        b.plan.partition_records,
        accounts.len()
    ));
    let (records, messages) = backlog(b, &subjects, &accounts);
    let message_count = messages.len();
    publish(&b.js, &log, messages).await?;
    let stream = b.js.get_stream(STREAM).await?;
    let heads = shared::nats::partition_heads(&stream, &subjects).await?;
    let idle = heads.iter().filter(|head| **head == 0).count();

    let setup = Setup {
        log: &log,
        heads: &heads,
        message_count,
        accounts: accounts.len(),
        partitions: subjects.partitions(),
        idle,
        records,
        rounds,
    };
    compare(b, &setup, Some(BOUND_CONCURRENCY), [ONE, TWO]).await?;
    compare(b, &setup, None, [ONE_DEFAULT, TWO_DEFAULT]).await
}

/// The backlog both comparisons catch up.
struct Setup<'a> {
    log: &'a shared::event_log::EventLogConfig,
    heads: &'a [u64],
    message_count: usize,
    accounts: usize,
    partitions: u16,
    idle: usize,
    records: u64,
    rounds: usize,
}

/// One process against two, `concurrency` read-model transactions at a time per process (the
/// default when `None`); adds the two measurements `names` and a note.
async fn compare(
    b: &mut Bench,
    setup: &Setup<'_>,
    concurrency: Option<usize>,
    names: [&str; 2],
) -> anyhow::Result<()> {
    let Setup {
        log,
        heads,
        message_count,
        accounts,
        partitions,
        idle,
        records,
        rounds,
    } = *setup;
    let slots = concurrency.map_or("the default apply concurrency".to_owned(), |c| {
        format!("PROJECTOR_APPLY_CONCURRENCY={c}")
    });
    phase(&format!(
        "projector catch-up of {records} records by one process and by two, {slots} \
         ({rounds} round(s) each)"
    ));
    // Index 0: one process, 1: two.
    let mut runs: [Vec<Run>; 2] = [Vec::new(), Vec::new()];
    for round in 0..rounds {
        let order = if round % 2 == 0 { [1, 2] } else { [2, 1] };
        for processes in order {
            let run = catch_up(b, log, heads, processes, concurrency).await?;
            runs[processes - 1].push(run);
        }
    }
    let rows: Vec<i64> = runs.iter().flatten().map(|run| run.rows).collect();
    anyhow::ensure!(
        rows.windows(2).all(|w| w[0] == w[1]) && rows.first().is_some_and(|r| *r > 0),
        "the catch-ups wrote different timeline rows: {rows:?}"
    );
    let best = |side: &[Run]| side.iter().map(|run| run.elapsed).min().unwrap_or_default();
    let what = |side: &str| {
        format!(
            "a mixed backlog of its own ({message_count} log messages over {accounts} \
             accounts, every one of the stream's {partitions} partitions with work; stream \
             {STREAM}) projected into a fresh, empty database by {side}, {slots}; best of \
             {rounds} catch-up(s), alternated with the other side; includes start-up"
        )
    };
    for (name, side, elapsed) in [
        (names[0], "one projector process", best(&runs[0])),
        (
            names[1],
            "two projector processes started together",
            best(&runs[1]),
        ),
    ] {
        b.report.measurements.push(Measurement::new(
            name,
            &what(side),
            "records",
            records,
            elapsed,
            None,
            0,
        ));
    }
    let describe = |side: &[Run]| {
        let all: Vec<String> = side
            .iter()
            .map(|run| format!("{:.2} s ({})", run.elapsed.as_secs_f64(), run.cpu))
            .collect();
        all.join("; ")
    };
    let (one, two) = (best(&runs[0]), best(&runs[1]));
    let mut note = format!(
        "{slots}: two processes {:.2} x one; one process: {}; two processes: {}",
        one.as_secs_f64() / two.as_secs_f64().max(1e-9),
        describe(&runs[0]),
        describe(&runs[1])
    );
    if idle > 0 {
        note.push_str(&format!("; {idle} partition(s) had no work"));
    }
    b.note(names[1], note);
    Ok(())
}

/// Mixed log messages (70% chat, 20% custom events, 10% joins and quits) for `accounts` in
/// turn, on each account's partitioned subject, up to `partition_records` records; returns
/// the records and the messages.
fn backlog(b: &Bench, subjects: &Subjects, accounts: &[Uuid]) -> (u64, Vec<Outgoing>) {
    let mut rng = StdRng::seed_from_u64(19);
    let servers = uuids(40);
    let mut messages = Vec::new();
    let mut records = 0;
    for account in accounts.iter().cycle() {
        if records >= b.plan.partition_records {
            break;
        }
        let (message, count) = mixed_log_message(&mut rng, *account, &servers, &b.players);
        records += count;
        messages.push(Outgoing::of(subjects, &message));
    }
    (records as u64, messages)
}

/// One catch-up of the stream by `processes` projector processes started together, into a
/// fresh database, until every partition reaches its head.
async fn catch_up(
    b: &Bench,
    log: &shared::event_log::EventLogConfig,
    heads: &[u64],
    processes: usize,
    concurrency: Option<usize>,
) -> anyhow::Result<Run> {
    let name = format!("warden_bench_partitions_{processes}");
    let url = fresh_database(&b.pg_url, &name).await?;
    let pool = PgPool::connect(&url).await?;
    let mut env = env_on(b, log, &url);
    if let Some(concurrency) = concurrency {
        env.push(("PROJECTOR_APPLY_CONCURRENCY", concurrency.to_string()));
    }
    let logs: Vec<PathBuf> = (0..processes)
        .map(|i| {
            b.log_dir
                .join(format!("projector-{STREAM}-{processes}-{i}.log"))
        })
        .collect();
    let started = Instant::now();
    let projectors = futures::future::try_join_all(
        logs.iter()
            .map(|log| ServiceProcess::start_logging_to(Service::Projector, &env, log)),
    )
    .await?;
    let cpu = b.cpu(&projectors.iter().collect::<Vec<_>>());
    let caught_up = wait_heads(&pool, heads, Duration::from_secs(3600)).await;
    let elapsed = started.elapsed();
    let cpu = cpu.since();
    for projector in projectors {
        projector.stop().await;
    }
    caught_up?;
    let rows: i64 = sqlx::query_scalar("SELECT count(*) FROM events")
        .fetch_one(&pool)
        .await?;
    pool.close().await;
    drop_database(&b.pg_url, &name).await?;
    Ok(Run { elapsed, cpu, rows })
}
