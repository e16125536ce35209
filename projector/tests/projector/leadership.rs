//! Leases on partitions: projector processes share the log's partitions; when one is
//! killed mid-chunk the others take its partitions over, and the read models still equal one
//! clean fold (nothing lost, nothing doubled).

use crate::crash_safety::{sigkill, spawn_projector};
use crate::harness::{Harness, checkpoint, eventually};
use crate::workload::{
    Workload, assert_ledger_stored_once, assert_same_read_models, every_checkpoint_at, fresh_fold,
    one_per_partition,
};
use sqlx::PgPool;
use std::process::Child;

/// A projector child process, killed when the test ends however it ends (a failed assertion
/// would otherwise leave it running).
struct Spawned(Option<Child>);

impl Spawned {
    fn start(h: &Harness) -> anyhow::Result<Spawned> {
        Ok(Spawned(Some(spawn_projector(h)?)))
    }

    fn kill(mut self) -> anyhow::Result<()> {
        match self.0.take() {
            Some(child) => sigkill(child),
            None => Ok(()),
        }
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        if let Some(child) = self.0.take() {
            let _ = sigkill(child);
        }
    }
}

/// How many partitions each projector process holds (by the application_name of its lease
/// sessions: `warden-projector <membership pid>`), in name order.
pub(crate) async fn holders(pool: &PgPool) -> anyhow::Result<Vec<(String, i64)>> {
    Ok(sqlx::query_as(
        "SELECT a.application_name, count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid)
         WHERE l.locktype = 'advisory' AND l.granted AND l.mode = 'ExclusiveLock'
           AND a.application_name LIKE 'warden-projector %'
           AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
         GROUP BY 1 ORDER BY 1",
    )
    .fetch_all(pool)
    .await?)
}

/// Waits until the partitions are held as `shape` says (given the holders' counts).
pub(crate) async fn held_as(
    pool: &PgPool,
    what: &str,
    shape: impl Fn(&[i64]) -> bool,
) -> anyhow::Result<Vec<i64>> {
    eventually(what, || async {
        let counts: Vec<i64> = holders(pool).await?.into_iter().map(|(_, n)| n).collect();
        Ok(shape(&counts).then_some(counts))
    })
    .await
}

/// Publishes `records` more records on every workload, in turns; returns the last sequence.
pub(crate) async fn publish_on_all(
    h: &Harness,
    workloads: &mut [Workload],
    records: usize,
) -> anyhow::Result<u64> {
    let mut last = 0;
    for workload in workloads.iter_mut() {
        last = last.max(workload.publish_records(h, records).await?);
    }
    Ok(last)
}

#[tokio::test]
async fn a_partition_holder_killed_mid_chunk_is_taken_over_with_nothing_lost_or_doubled()
-> anyhow::Result<()> {
    let mut h = Harness::start().await?;
    h.stop_projector().await?;
    let partitions = i64::from(h.config.common.event_log.subjects().partitions());
    let mut workloads = one_per_partition(&h);

    let first = Spawned::start(&h)?;
    held_as(h.pool(), "one process to hold every partition", |c| {
        c == [partitions]
    })
    .await?;
    let second = Spawned::start(&h)?;
    // The first process lets partitions go while the second takes them: a split in passing
    // (e.g. [6, 2]) is not yet the fair one, so wait for the fair split itself.
    let fair = (partitions + 1) / 2;
    held_as(
        h.pool(),
        "two processes to share the partitions fairly",
        |c| c.len() == 2 && c.iter().sum::<i64>() == partitions && c.iter().all(|n| *n <= fair),
    )
    .await?;

    // A backlog on every partition; the kill lands while both are applying it (chunks of 4).
    let last = publish_on_all(&h, &mut workloads, 3_000).await?;
    eventually("the catch-up to be under way", || async {
        Ok((checkpoint(h.pool()).await? > 0).then_some(()))
    })
    .await?;
    first.kill()?;
    anyhow::ensure!(
        checkpoint(h.pool()).await? < last as i64,
        "the backlog was applied before the kill; the test proves nothing"
    );
    held_as(h.pool(), "the survivor to take every partition", |c| {
        c == [partitions]
    })
    .await?;
    let after = publish_on_all(&h, &mut workloads, 200).await?;
    every_checkpoint_at(h.pool(), after).await?;
    second.kill()?;

    let fresh = fresh_fold(&h, after).await?;
    assert_same_read_models(h.pool(), &fresh.pool).await?;
    for workload in &workloads {
        assert_ledger_stored_once(h.pool(), &workload.ledger).await?;
    }
    Ok(())
}
