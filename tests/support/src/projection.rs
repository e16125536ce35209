//! When the projector has applied everything in the log: each partition's checkpoints
//! (`projection_checkpoints`, one row per read model and partition) at that partition's head
//! ([`shared::nats::partition_heads`]), not at the stream's last sequence, which a partition
//! whose accounts wrote nothing lately never reaches.

use async_nats::jetstream::stream::Stream;
use shared::subjects::Subjects;
use sqlx::PgPool;
use std::time::{Duration, Instant};

/// Whether every read model's checkpoint in partition `k` is at `heads[k]` or past it (a
/// partition with nothing to read, head 0, needs no row). Checkpoints made before partitions
/// (`log_partition` -1) not yet split by the projector count as not caught up.
pub async fn caught_up(pool: &PgPool, heads: &[u64]) -> anyhow::Result<bool> {
    let rows: Vec<(i32, Option<i64>)> = sqlx::query_as(
        "SELECT log_partition, min(last_sequence) FROM projection_checkpoints
         GROUP BY log_partition",
    )
    .fetch_all(pool)
    .await?;
    if rows.iter().any(|(partition, _)| *partition < 0) {
        return Ok(false);
    }
    Ok(heads.iter().enumerate().all(|(partition, head)| {
        *head == 0
            || rows.iter().any(|(k, lowest)| {
                usize::try_from(*k).ok() == Some(partition)
                    && lowest.is_some_and(|l| u64::try_from(l).unwrap_or(0) >= *head)
            })
    }))
}

/// Waits (at most `limit`) until the projector on `pool` has applied everything `stream` holds
/// now.
pub async fn wait_caught_up(
    pool: &PgPool,
    stream: &Stream,
    subjects: &Subjects,
    limit: Duration,
) -> anyhow::Result<()> {
    let heads = shared::nats::partition_heads(stream, subjects).await?;
    let deadline = Instant::now() + limit;
    loop {
        if caught_up(pool, &heads).await.unwrap_or(false) {
            return Ok(());
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "the projector did not reach the partitions' heads {heads:?} within {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}
