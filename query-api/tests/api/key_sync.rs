//! The key directory after a NATS outage: what left the bucket meanwhile is refused, and the
//! streams its key held end.

use crate::helpers::{TestApp, eventually, text};
use crate::stream_lifetime::Sse;
use reqwest::StatusCode;
use shared::keys::hash_secret;
use std::time::{Duration, Instant};

/// Whether `GET /readyz` answers `status` within 15 s.
async fn readiness_becomes(app: &TestApp, status: StatusCode) -> bool {
    eventually(Duration::from_secs(15), || async {
        app.get_with("/readyz", None)
            .await
            .is_ok_and(|r| r.status() == status)
    })
    .await
}

#[tokio::test]
async fn a_key_erased_while_the_watch_is_down_is_refused_once_it_is_back() -> anyhow::Result<()> {
    let app = TestApp::spawn_behind_proxy().await?;
    let proxy = app.proxy.as_ref().expect("spawned behind a proxy");
    let (account, doomed) = app.account_with_dashboard_key().await?;
    let doomed = text(&doomed["key"]);
    let kept = text(&app.create_key(&account, "dashboard").await?["key"]);
    let works = app
        .status_becomes(
            "/api/v1/events",
            &kept,
            StatusCode::OK,
            crate::helpers::WAIT,
        )
        .await?;
    assert!(works, "the second key never started working");
    let stream = Sse::open(&app.url(""), &app.client, &doomed).await?;

    // The app's connection goes down, and stays down until the key is gone without a trace.
    proxy.cut();
    assert!(readiness_becomes(&app, StatusCode::SERVICE_UNAVAILABLE).await);
    let bucket = &app.config.common.event_log.key_bucket;
    test_support::erase_kv_key(&app.nats_url, bucket, &hash_secret(&doomed)).await?;
    proxy.restore();
    assert!(readiness_becomes(&app, StatusCode::OK).await);

    let refused = app
        .status_becomes(
            "/api/v1/events",
            &doomed,
            StatusCode::UNAUTHORIZED,
            Duration::from_secs(15),
        )
        .await?;
    assert!(
        refused,
        "the erased key is still accepted after the watch came back"
    );
    // The stream it held ends as a revocation does.
    stream
        .ends_revoked(Instant::now() + Duration::from_secs(5))
        .await?;
    // Only that key: the one the bucket still holds works as before.
    let response = app.get_with("/api/v1/events", Some(&kept)).await?;
    assert_eq!(response.status(), StatusCode::OK);
    Ok(())
}
