//! The partition targets, each on a log of its own (a stream and a fresh database, like
//! `index_cost`), so neither waits for nor lengthens the shared backlog:
//!
//! - [`scale_out`]: a backlog spread over many accounts (every partition has work), caught up
//!   by one projector process, then by two started together; two must do >= 1.6x one.
//! - [`mixed_tenant`]: one account's large backlog being applied while another account, in a
//!   different partition, writes single events through ingest; each must be readable within
//!   1 s (p99) of its 202.

mod mixed_tenant;
mod scale_out;

use crate::raw::{Outgoing, publish_backlog, raw_stream};
use crate::run::Bench;
use async_nats::jetstream;
use shared::event_log::EventLogConfig;
use sqlx::PgPool;
use std::time::{Duration, Instant};

pub(crate) use mixed_tenant::NAME as MIXED_TENANT;
pub(crate) use scale_out::{ONE, TWO};

/// Runs both measurements.
pub(crate) async fn measure(b: &mut Bench) -> anyhow::Result<()> {
    scale_out::measure(b).await?;
    mixed_tenant::measure(b).await
}

/// A fresh stream of its own named `name` under `prefix`, configured like the event log (with
/// the default partitions): one left by an earlier run on the same server would add to the
/// backlog, so it is deleted first (a missing one is what we want, so that error means
/// nothing).
pub(crate) async fn fresh_stream(
    js: &jetstream::Context,
    name: &str,
    prefix: &str,
) -> anyhow::Result<EventLogConfig> {
    js.delete_stream(name).await.ok();
    raw_stream(js, name, prefix).await
}

/// The services' environment, pointed at `log`'s stream and the database at `database_url`.
fn env_on(b: &Bench, log: &EventLogConfig, database_url: &str) -> Vec<(&'static str, String)> {
    b.env_on(&log.stream, &log.subject_prefix, database_url)
}

/// Publishes `messages` to `log`'s stream, every one acknowledged; returns how long it took.
async fn publish(
    js: &jetstream::Context,
    log: &EventLogConfig,
    messages: Vec<Outgoing>,
) -> anyhow::Result<Duration> {
    publish_backlog(js, &log.stream, messages, "backlog").await
}

/// The lowest checkpoint of every partition that has one (index = partition; `None` for a
/// partition without rows yet).
async fn checkpoints(pool: &PgPool, partitions: u16) -> anyhow::Result<Vec<Option<u64>>> {
    let rows: Vec<(i32, Option<i64>)> = sqlx::query_as(
        "SELECT log_partition, min(last_sequence) FROM projection_checkpoints
         GROUP BY log_partition",
    )
    .fetch_all(pool)
    .await?;
    Ok((0..i32::from(partitions))
        .map(|k| {
            rows.iter()
                .find(|(partition, _)| *partition == k)
                .and_then(|(_, lowest)| *lowest)
                .map(|l| u64::try_from(l).unwrap_or(0))
        })
        .collect())
}

/// Whether every partition's checkpoints reach its head (`heads`, from
/// [`shared::nats::partition_heads`]); a partition with nothing to read counts as there.
async fn caught_up(pool: &PgPool, heads: &[u64]) -> anyhow::Result<bool> {
    let partitions = u16::try_from(heads.len()).unwrap_or(u16::MAX);
    let at = checkpoints(pool, partitions).await?;
    Ok(heads
        .iter()
        .zip(at)
        .all(|(head, at)| *head == 0 || at.is_some_and(|at| at >= *head)))
}

/// Waits (at most `limit`) until the read models in `pool` have applied every partition up
/// to `heads`.
pub(crate) async fn wait_heads(
    pool: &PgPool,
    heads: &[u64],
    limit: Duration,
) -> anyhow::Result<()> {
    let deadline = Instant::now() + limit;
    while !caught_up(pool, heads).await? {
        anyhow::ensure!(
            Instant::now() < deadline,
            "the projector did not reach the partitions' heads {heads:?} within {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    Ok(())
}
