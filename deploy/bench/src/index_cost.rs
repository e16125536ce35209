//! What the chat keyword index (`chat_messages_message_trgm_idx`, a trigram GIN index) costs
//! the projector: the very backlog of `projector_catch_up` projected again into two fresh
//! databases, one of them without that index, in the same run.

use crate::children::ServiceProcess;
use crate::projection::wait_projected;
use crate::run::{Bench, phase};
use crate::serve::Service;
use crate::setup::{drop_database, fresh_database};
use crate::stats::Measurement;
use sqlx::PgPool;
use std::time::{Duration, Instant};

/// The catch-up with every index of the schema.
pub(crate) const WITH: &str = "projector_catch_up_chat_trgm";
/// The catch-up with the chat trigram index dropped.
pub(crate) const WITHOUT: &str = "projector_catch_up_no_chat_trgm";

/// Projects log messages `1..=last` (`records` records) into a fresh database with and one
/// without the index, `rounds` times each, alternating which goes first so neither side
/// always meets the warmer caches; adds both measurements.
pub(crate) async fn measure(b: &mut Bench, last: u64, records: u64) -> anyhow::Result<()> {
    let rounds = b.plan.index_cost_rounds.max(1);
    phase(&format!(
        "projector catch-up with and without the chat trigram index ({rounds} round(s) each)"
    ));
    let mut spent = [Duration::ZERO; 2];
    let mut rows = [0i64; 2];
    for round in 0..rounds {
        let order = if round % 2 == 0 {
            [false, true]
        } else {
            [true, false]
        };
        for with_index in order {
            let (elapsed, chat_rows) = catch_up(b, last, with_index).await?;
            spent[usize::from(with_index)] += elapsed;
            rows[usize::from(with_index)] = chat_rows;
        }
    }
    anyhow::ensure!(
        rows[0] == rows[1] && rows[0] > 0,
        "the two catch-ups wrote different chat rows: {} without the index, {} with it",
        rows[0],
        rows[1]
    );
    let what = |with: &str| {
        format!(
            "the projector_catch_up backlog ({last} log messages, {} chat rows) projected into \
             a fresh database {with}; {rounds} round(s), alternated with the other side; \
             includes start-up",
            rows[0]
        )
    };
    let total = records * rounds as u64;
    b.report.measurements.push(Measurement::new(
        WITH,
        &what("with chat_messages_message_trgm_idx"),
        "records",
        total,
        spent[1],
        None,
        0,
    ));
    b.report.measurements.push(Measurement::new(
        WITHOUT,
        &what("where chat_messages_message_trgm_idx was dropped"),
        "records",
        total,
        spent[0],
        None,
        0,
    ));
    Ok(())
}

/// One catch-up into a fresh database; returns its duration and the chat rows it wrote.
async fn catch_up(b: &Bench, last: u64, with_index: bool) -> anyhow::Result<(Duration, i64)> {
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
    let mut env = b.env.clone();
    for (key, value) in &mut env {
        if *key == "DATABASE_URL" {
            value.clone_from(&url);
        }
    }
    let log = b.log_dir.join(format!("projector-{name}.log"));
    let started = Instant::now();
    let projector = ServiceProcess::start_logging_to(Service::Projector, &env, &log).await?;
    let projected = wait_projected(&pool, last, Duration::from_secs(3600)).await;
    let elapsed = started.elapsed();
    projector.stop().await;
    projected?;
    let chat_rows: i64 = sqlx::query_scalar("SELECT count(*) FROM chat_messages")
        .fetch_one(&pool)
        .await?;
    pool.close().await;
    drop_database(&b.pg_url, name).await?;
    Ok((elapsed, chat_rows))
}
