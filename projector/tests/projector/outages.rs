//! The projector rides out a broker crash, and its ops endpoints report where it stands.

use crate::harness::{Harness, custom_event, logged};
use chrono::Utc;
use projector::{App, Projector};
use shared::records::CustomEvent;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

#[tokio::test]
async fn keeps_projecting_after_nats_server_is_killed_and_restarted() -> anyhow::Result<()> {
    let mut h = Harness::start().await?;
    let (account, player) = (Uuid::now_v7(), Uuid::now_v7());
    let event = |name: &str| vec![logged::<CustomEvent>(&custom_event(player, name, "{}"))];
    h.publish(account, Utc::now(), event("before_crash"))
        .await?;
    h.caught_up().await?;

    h.nats.kill();
    h.nats.restart().await?;
    // The test's own client reconnects too; publish once it has.
    let after = crate::harness::eventually("a publish after the restart", || {
        let h = &h;
        let event = event("after_restart");
        async move { Ok(h.publish(account, Utc::now(), event).await.ok()) }
    })
    .await?;
    h.caught_up_to(after).await?;

    let names: Vec<String> = sqlx::query_scalar("SELECT name FROM events ORDER BY seq")
        .fetch_all(h.pool())
        .await?;
    assert_eq!(names, ["before_crash", "after_restart"]);
    Ok(())
}

fn retries() -> u64 {
    let metrics = shared::telemetry::prometheus().render();
    metrics
        .lines()
        .find_map(|line| line.strip_prefix("projector_retries_total "))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or(0)
}

#[tokio::test]
async fn a_database_failure_is_retried_without_skipping() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let (account, player) = (Uuid::now_v7(), Uuid::now_v7());
    let event = |name: &str| vec![logged::<CustomEvent>(&custom_event(player, name, "{}"))];
    h.publish(account, Utc::now(), event("first")).await?;
    h.caught_up().await?;

    // Every insert fails while the table is away, as it would with PostgreSQL down.
    sqlx::query("ALTER TABLE events RENAME TO events_away")
        .execute(h.pool())
        .await?;
    let retries_before = retries();
    let second = h.publish(account, Utc::now(), event("second")).await?;
    crate::harness::eventually("the projector to fail and retry", || async {
        Ok((retries() > retries_before).then_some(()))
    })
    .await?;
    assert!(crate::harness::checkpoint(h.pool()).await? < second as i64);

    sqlx::query("ALTER TABLE events_away RENAME TO events")
        .execute(h.pool())
        .await?;
    h.caught_up_to(second).await?;
    let names: Vec<String> = sqlx::query_scalar("SELECT name FROM events ORDER BY seq")
        .fetch_all(h.pool())
        .await?;
    assert_eq!(names, ["first", "second"]);
    // An outage is not the message's fault: nothing was set aside.
    assert_eq!(crate::parking::parked(h.pool()).await?, []);
    Ok(())
}

#[tokio::test]
async fn readiness_reports_the_lag() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let (account, player) = (Uuid::now_v7(), Uuid::now_v7());
    let last = h
        .publish(
            account,
            Utc::now(),
            vec![logged::<CustomEvent>(&custom_event(player, "x", "{}"))],
        )
        .await?;
    h.caught_up_to(last).await?;

    // A second, idle projector on the same database reads the checkpoint the first committed.
    let idle = Projector::build(&h.config).await?;
    let (ready, body) = crate::harness::patient(&idle.readiness).check().await;
    assert!(ready, "{body}");
    let lag = &body["checks"]["projector_lag"]["detail"];
    assert_eq!(lag["stream_last_sequence"], last);
    assert_eq!(lag["applied_sequence"], last);
    assert_eq!(lag["lag_messages"], 0);
    assert_eq!(lag["seconds_behind"], 0.0);
    assert_eq!(body["checks"]["projector_postgres"]["ok"], true);
    assert_eq!(body["checks"]["projector_nats"]["ok"], true);
    Ok(())
}

#[tokio::test]
async fn the_app_serves_ops_endpoints_and_stops_on_shutdown() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let app = App::build(h.config.clone()).await?;
    let addr = app.local_addr();
    let shutdown = CancellationToken::new();
    let running = tokio::spawn(app.run_until_stopped(shutdown.clone()));

    // A probe slow on a loaded machine answers one request 503 (timed out): ask until ready.
    let response = crate::harness::eventually("/readyz to answer 200", || async {
        let mut conn = tokio::net::TcpStream::connect(addr).await?;
        conn.write_all(b"GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .await?;
        let mut response = String::new();
        conn.read_to_string(&mut response).await?;
        Ok(response.starts_with("HTTP/1.1 200").then_some(response))
    })
    .await?;
    assert!(response.contains("projector_lag"), "{response}");

    shutdown.cancel();
    tokio::time::timeout(std::time::Duration::from_secs(10), running).await???;
    Ok(())
}
