//! Leadership (issue 8): any number of projector processes, one active; when the leader is
//! killed a standby takes over, and the read models still equal one clean fold.

use crate::crash_safety::{sigkill, spawn_projector};
use crate::harness::Harness;
use crate::workload::{
    Workload, assert_ledger_stored_once, assert_same_read_models, every_checkpoint_at, fresh_fold,
};
use sqlx::PgPool;

/// Projector leadership locks held in this database.
async fn leaders(pool: &PgPool) -> anyhow::Result<i64> {
    Ok(sqlx::query_scalar(
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted \
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
    )
    .fetch_one(pool)
    .await?)
}

#[tokio::test]
async fn one_projector_leads_and_a_standby_takes_over_when_it_is_killed() -> anyhow::Result<()> {
    let mut h = Harness::start().await?;
    h.stop_projector().await?;
    let mut workload = Workload::new();

    let leader = spawn_projector(&h)?;
    let first = workload.publish_records(&h, 1_000).await?;
    every_checkpoint_at(h.pool(), first).await?;
    let standby = spawn_projector(&h)?;
    let second = workload.publish_records(&h, 1_000).await?;
    every_checkpoint_at(h.pool(), second).await?;
    assert_eq!(leaders(h.pool()).await?, 1, "two processes, one leader");

    // Only the standby is left to apply what comes after the leader dies.
    sigkill(leader)?;
    let third = workload.publish_records(&h, 1_000).await?;
    every_checkpoint_at(h.pool(), third).await?;
    assert_eq!(leaders(h.pool()).await?, 1, "the standby took the lock");
    sigkill(standby)?;

    let fresh = fresh_fold(&h, third).await?;
    assert_same_read_models(h.pool(), &fresh.pool).await?;
    assert_ledger_stored_once(h.pool(), &workload.ledger).await
}
