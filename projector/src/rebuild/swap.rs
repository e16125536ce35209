//! The swap: one transaction that pauses the live projector on the rebuilt models (every
//! partition), brings the copy up to the live checkpoints, and puts the copy in place.

use super::copy::TableCopy;
use super::partition::PartitionReplay;
use super::replay::Replay;
use crate::checkpoint::Partition;
use sqlx::{Executor, PgConnection, PgPool};
use std::time::Duration;

/// How long the swap may wait for the live projector's last chunk and the readers.
const SWAP_LOCK_TIMEOUT: &str = "5s";
/// How long the swap may spend applying what the live projector committed meanwhile.
const SWAP_CATCH_UP: Duration = Duration::from_secs(10);

/// The swap transaction (see the module docs of [`super`]); leaves everything live untouched
/// when it fails.
pub(super) async fn swap(
    pool: &PgPool,
    copy: &TableCopy,
    names: &[&'static str],
    replay: &Replay<'_>,
    partitions: &mut [PartitionReplay],
    stream: &async_nats::jetstream::stream::Stream,
) -> anyhow::Result<()> {
    let mut tx = pool.begin().await?;
    let set_timeout = format!("SET LOCAL lock_timeout = '{SWAP_LOCK_TIMEOUT}'");
    (&mut *tx).execute(set_timeout.as_str()).await?;
    let live = lock_live_checkpoints(&mut tx, names).await?;
    let deadline = tokio::time::Instant::now() + SWAP_CATCH_UP;
    // Every partition catches up at once: the live projector waits on these models meanwhile.
    futures::future::try_join_all(partitions.iter_mut().map(|reader| {
        let target = live
            .iter()
            .find(|(partition, _)| *partition == reader.partition)
            .map_or(0, |(_, at)| *at);
        reader.catch_up(replay, stream, target, deadline)
    }))
    .await?;
    copy.swap_in(&mut tx, names, &replay.positions()).await?;
    tx.commit().await?;
    Ok(())
}

/// Locks every live checkpoint row of `names`, in every partition, for this transaction, and
/// returns the highest of each partition. The rows are locked in the order of
/// [`crate::checkpoint::lock`] (by model, then partition); a live model's transaction locks
/// only its own row of one partition, so the two never wait on each other in a cycle.
async fn lock_live_checkpoints(
    conn: &mut PgConnection,
    names: &[&'static str],
) -> Result<Vec<(Partition, u64)>, sqlx::Error> {
    let rows: Vec<(i32, i64)> = sqlx::query_as(
        "SELECT log_partition, last_sequence FROM public.projection_checkpoints
         WHERE projection = ANY($1) AND log_partition >= 0
         ORDER BY projection, log_partition FOR UPDATE",
    )
    .bind(names)
    .fetch_all(&mut *conn)
    .await?;
    Ok(highest_by_partition(rows))
}

/// The highest live checkpoint of each partition among `names`, without locking: the copy
/// must reach it before the swap.
pub(super) async fn live_positions(
    pool: &PgPool,
    names: &[&'static str],
) -> Result<Vec<(Partition, u64)>, sqlx::Error> {
    let rows: Vec<(i32, i64)> = sqlx::query_as(
        "SELECT log_partition, last_sequence FROM public.projection_checkpoints
         WHERE projection = ANY($1) AND log_partition >= 0",
    )
    .bind(names)
    .fetch_all(pool)
    .await?;
    Ok(highest_by_partition(rows))
}

fn highest_by_partition(rows: Vec<(i32, i64)>) -> Vec<(Partition, u64)> {
    let mut highest: Vec<(Partition, u64)> = Vec::new();
    for (partition, at) in rows {
        let (Ok(partition), Ok(at)) = (Partition::try_from(partition), u64::try_from(at)) else {
            continue;
        };
        match highest.iter_mut().find(|(p, _)| *p == partition) {
            Some((_, high)) => *high = (*high).max(at),
            None => highest.push((partition, at)),
        }
    }
    highest.sort_unstable();
    highest
}
