//! The key directory after a NATS outage: what left the bucket meanwhile is refused.

use crate::helpers::TestIngest;
use shared::keys::{KeyKind, hash_secret};
use std::time::Duration;
use tokio::time::Instant;

/// Polls `GET /readyz` until it answers `status`; panics past the deadline.
async fn wait_for_readiness(ingest: &TestIngest, status: u16) {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let now = ingest
            .http
            .get(format!("{}/readyz", ingest.base))
            .send()
            .await
            .map(|r| r.status().as_u16());
        if now.as_ref().is_ok_and(|s| *s == status) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "readyz never became {status} ({now:?})"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The status a plugin write with `key` gets (an empty heartbeat: 422 once admitted).
async fn status_with(ingest: &TestIngest, key: &str) -> u16 {
    ingest
        .post_raw(
            "/api/plugin/heartbeat",
            key,
            "application/json",
            b"{}".to_vec(),
        )
        .await
        .status()
        .as_u16()
}

#[tokio::test]
async fn a_key_erased_while_the_watch_is_down_is_refused_once_it_is_back() {
    let ingest = TestIngest::start_behind_proxy().await;
    let proxy = ingest.proxy.as_ref().expect("started behind a proxy");
    let doomed = ingest.add_key(ingest.account_id, KeyKind::Plugin).await;
    ingest.wait_until_accepts(&doomed).await;

    // Ingest's connection goes down, and stays down until the key is gone without a trace.
    proxy.cut();
    wait_for_readiness(&ingest, 503).await;
    test_support::erase_kv_key(
        &ingest.nats.url(),
        &ingest.log.key_bucket,
        &hash_secret(&doomed),
    )
    .await
    .expect("key erased");
    proxy.restore();
    wait_for_readiness(&ingest, 200).await;

    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let status = status_with(&ingest, &doomed).await;
        if status == 401 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the erased key is still accepted after the watch came back ({status})"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Only that key: the one the bucket still holds works as before.
    assert_eq!(status_with(&ingest, &ingest.plugin_key).await, 422);
}
