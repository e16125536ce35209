//! A stuck projector is visible: `/readyz` fails its `projector_lag` check once nothing was
//! applied for `PROJECTOR_STALL_SECONDS` while messages wait, and recovers with the pipeline.

use crate::harness::{Harness, custom_event, eventually, logged, patient};
use crate::parking::parked;
use chrono::Utc;
use shared::records::CustomEvent;
use sqlx::Connection;
use std::time::Duration;
use uuid::Uuid;

#[tokio::test]
async fn readiness_fails_while_writes_block_and_recovers_with_nothing_parked() -> anyhow::Result<()>
{
    let h = Harness::start_with(|config| config.stall_after = Duration::from_secs(1)).await?;
    let readiness = h.readiness.clone().expect("a running projector");
    let (account, player) = (Uuid::now_v7(), Uuid::now_v7());
    let event = |name: &str| vec![logged::<CustomEvent>(&custom_event(player, name, "{}"))];
    let first = h.publish(account, Utc::now(), event("first")).await?;
    h.caught_up_to(first).await?;
    let (ready, body) = readiness.check().await;
    assert!(ready, "{body}");

    // An outage that never errors: every write to `events` waits behind this lock.
    let mut blocker = sqlx::PgConnection::connect(&h.db.url).await?;
    let mut lock = blocker.begin().await?;
    sqlx::query("LOCK TABLE events IN ACCESS EXCLUSIVE MODE")
        .execute(&mut *lock)
        .await?;
    let second = h.publish(account, Utc::now(), event("second")).await?;

    // Wait for the stall itself: another failure (a probe slow on a loaded machine) is not it.
    let reason = eventually("/readyz to report the projector stalled", || {
        let readiness = readiness.clone();
        async move {
            let (ready, body) = readiness.check().await;
            let check = &body["checks"]["projector_lag"];
            let error = check["error"].to_string();
            let stalled = !ready && check["ok"] == false && error.contains("stalled: no progress");
            Ok(stalled.then_some(error))
        }
    })
    .await?;
    assert!(reason.contains("1 log messages wait"), "{reason}");
    assert!(crate::harness::checkpoint(h.pool()).await? < second as i64);
    let metrics = shared::telemetry::prometheus().render();
    for gauge in [
        "projector_stalled",
        "projector_oldest_unapplied_age_seconds",
    ] {
        assert!(metrics.contains(gauge), "{gauge} missing: {metrics}");
    }

    lock.rollback().await?;
    h.caught_up_to(second).await?;
    eventually("/readyz to report ready again", || {
        let readiness = readiness.clone();
        async move { Ok(readiness.check().await.0.then_some(())) }
    })
    .await?;
    let names: Vec<String> = sqlx::query_scalar("SELECT name FROM events ORDER BY seq")
        .fetch_all(h.pool())
        .await?;
    assert_eq!(names, ["first", "second"]);
    assert_eq!(parked(h.pool()).await?, []);
    Ok(())
}

#[tokio::test]
async fn a_standby_reports_a_stalled_leader() -> anyhow::Result<()> {
    let mut h = Harness::start_with(|config| config.stall_after = Duration::from_secs(1)).await?;
    let (account, player) = (Uuid::now_v7(), Uuid::now_v7());
    let first = h
        .publish(
            account,
            Utc::now(),
            vec![logged::<CustomEvent>(&custom_event(player, "a", "{}"))],
        )
        .await?;
    h.caught_up_to(first).await?;
    // No leader any more, and a message waits: the standby sees the checkpoints stand still.
    h.stop_projector().await?;
    let standby = projector::Projector::build(&h.config).await?;
    h.publish(
        account,
        Utc::now(),
        vec![logged::<CustomEvent>(&custom_event(player, "b", "{}"))],
    )
    .await?;
    let readiness = patient(&standby.readiness);
    eventually("the standby to report a stall", || {
        let readiness = readiness.clone();
        async move {
            let (_, body) = readiness.check().await;
            let check = &body["checks"]["projector_lag"];
            let stalled = check["ok"] == false && check["error"].to_string().contains("stalled");
            Ok(stalled.then_some(()))
        }
    })
    .await
}
