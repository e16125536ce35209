//! What the chat keyword index (`chat_messages_message_trgm_idx`, a trigram GIN index) costs
//! the projector: a chat-only backlog of its own, in a stream of its own (so it neither waits
//! for nor lengthens the shared backlog), projected into fresh databases with and without that
//! index, the two sides alternated, the best catch-up of each side kept.

use crate::children::ServiceProcess;
use crate::data::{CHAT_BATCH, chat_log_message, uuids};
use crate::projection::{last_sequence, subject_of, wait_projected};
use crate::raw::{self, Outgoing, raw_stream};
use crate::run::{Bench, phase};
use crate::serve::Service;
use crate::setup::{drop_database, fresh_database};
use crate::stats::Measurement;
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use sqlx::PgPool;
use std::time::{Duration, Instant};
use uuid::Uuid;

/// The catch-up with every index of the schema.
pub(crate) const WITH: &str = "projector_catch_up_chat_trgm";
/// The catch-up with the chat trigram index dropped.
pub(crate) const WITHOUT: &str = "projector_catch_up_no_chat_trgm";

/// The backlog's own stream and subject prefix (nothing else publishes there).
const STREAM: &str = "BENCH_INDEX_COST";
const PREFIX: &str = "benchidx";

/// Publishes the plan's chat backlog to its own stream, then projects it `rounds` times per
/// side, alternating which side goes first so neither always meets the warmer caches; adds
/// each side's best catch-up and a note with every round.
pub(crate) async fn measure(b: &mut Bench) -> anyhow::Result<()> {
    let rounds = b.plan.index_cost_rounds.max(1);
    let (records, last) = publish_backlog(b).await?;
    phase(&format!(
        "projector catch-up of {records} chat records with and without the chat trigram index \
         ({rounds} round(s) each)"
    ));
    // Index 0: without the index, 1: with it.
    let mut runs: [Vec<Duration>; 2] = [Vec::new(), Vec::new()];
    let mut rows = [0i64; 2];
    let mut start_up = Duration::ZERO;
    for round in 0..rounds {
        let order = if round % 2 == 0 {
            [false, true]
        } else {
            [true, false]
        };
        for with_index in order {
            let (elapsed, healthy, chat_rows) = catch_up(b, last, with_index).await?;
            start_up = start_up.max(healthy);
            runs[usize::from(with_index)].push(elapsed);
            rows[usize::from(with_index)] = chat_rows;
        }
    }
    anyhow::ensure!(
        rows[0] == rows[1] && rows[0] == records as i64,
        "the catch-ups wrote different chat rows: {} without the index, {} with it, {records} \
         records published",
        rows[0],
        rows[1]
    );
    let best = |side: &[Duration]| side.iter().min().copied().unwrap_or_default();
    let (without, with) = (best(&runs[0]), best(&runs[1]));
    let what = |side: &str| {
        format!(
            "a chat-only backlog of its own ({last} log messages of {CHAT_BATCH} records, stream \
             {STREAM}) projected by a projector process into a fresh, empty database {side}; \
             best of {rounds} catch-up(s), alternated with the other side; includes start-up"
        )
    };
    for (name, side, elapsed) in [
        (WITH, "with chat_messages_message_trgm_idx", with),
        (
            WITHOUT,
            "where chat_messages_message_trgm_idx was dropped",
            without,
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
    let secs = |side: &[Duration]| {
        let all: Vec<String> = side
            .iter()
            .map(|d| format!("{:.2} s", d.as_secs_f64()))
            .collect();
        all.join(", ")
    };
    let note = format!(
        "catch-ups without the index: {}; with it: {}; each includes the projector's start-up \
         (up to /healthz: at most {:.2} s), which both sides pay; the databases start empty, so \
         the index grows from nothing (a large existing chat_messages table may cost more per \
         insert)",
        secs(&runs[0]),
        secs(&runs[1]),
        start_up.as_secs_f64()
    );
    b.note(WITH, note);
    Ok(())
}

/// Publishes `index_cost_records` chat records (100-record batches) to a fresh stream of their
/// own; returns the records and the stream's last sequence.
async fn publish_backlog(b: &Bench) -> anyhow::Result<(u64, u64)> {
    let records = b.plan.index_cost_records;
    phase(&format!(
        "chat backlog of {records} records for the index cost"
    ));
    // A stream left by an earlier run on the same server would double the backlog; a missing
    // one is what we want, so the error of deleting it means nothing.
    b.js.delete_stream(STREAM).await.ok();
    let config = raw_stream(&b.js, STREAM, PREFIX).await?;
    let subjects = config.subjects();
    let mut rng = StdRng::seed_from_u64(15);
    let servers = uuids(20);
    let messages: Vec<Outgoing> = (0..records.div_ceil(CHAT_BATCH))
        .map(|_| {
            let server = servers.choose(&mut rng).copied().unwrap_or_else(Uuid::nil);
            let message = chat_log_message(&mut rng, b.account, server, &b.players);
            Outgoing {
                subject: subject_of(&subjects, &message),
                message_id: Uuid::new_v4().simple().to_string(),
                payload: message.encode(),
            }
        })
        .collect();
    let published = (messages.len() * CHAT_BATCH) as u64;
    raw::publish_backlog(&b.js, STREAM, messages, "index-cost backlog").await?;
    Ok((published, last_sequence(&b.js, STREAM).await?))
}

/// One catch-up of the index-cost stream into a fresh database; returns its duration, how
/// long the projector took to answer /healthz, and the chat rows it wrote.
async fn catch_up(
    b: &Bench,
    last: u64,
    with_index: bool,
) -> anyhow::Result<(Duration, Duration, i64)> {
    let name = if with_index {
        "warden_bench_chat_trgm"
    } else {
        "warden_bench_no_chat_trgm"
    };
    let url = fresh_database(&b.pg_url, name).await?;
    let pool = PgPool::connect(&url).await?;
    if !with_index {
        sqlx::query("DROP INDEX chat_messages_message_trgm_idx")
            .execute(&pool)
            .await?;
    }
    let env = b.env_on(STREAM, PREFIX, &url);
    let log = b.log_dir.join(format!("projector-{name}.log"));
    let started = Instant::now();
    let projector = ServiceProcess::start_logging_to(Service::Projector, &env, &log).await?;
    let healthy = started.elapsed();
    let projected = wait_projected(&pool, last, Duration::from_secs(3600)).await;
    let elapsed = started.elapsed();
    projector.stop().await;
    projected?;
    let chat_rows: i64 = sqlx::query_scalar("SELECT count(*) FROM chat_messages")
        .fetch_one(&pool)
        .await?;
    pool.close().await;
    drop_database(&b.pg_url, name).await?;
    Ok((elapsed, healthy, chat_rows))
}
