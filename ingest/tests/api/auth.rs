use crate::helpers::{PLAYER, TestIngest};
use serde_json::json;
use shared::keys::KeyKind;
use std::time::Duration;

#[tokio::test]
async fn missing_invalid_and_wrong_kind_keys_are_refused_with_problem_details() {
    let ingest = TestIngest::start().await;
    let url = format!("{}/api/plugin/heartbeat", ingest.base);

    let response = ingest
        .http
        .post(&url)
        .json(&json!({}))
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), 401);
    assert_eq!(response.headers()["www-authenticate"], "Bearer");
    assert_eq!(
        response.headers()["content-type"],
        "application/problem+json"
    );
    let body: serde_json::Value = response.json().await.expect("json");
    assert_eq!(body["code"], "missing_credentials");

    for (key, status, code) in [
        ("wdn_plugin_0000", 401, "invalid_credentials"),
        (ingest.dashboard_key.as_str(), 403, "wrong_key_type"),
        (ingest.admin_key.as_str(), 403, "wrong_key_type"),
    ] {
        let response = ingest
            .post_raw(
                "/api/plugin/heartbeat",
                key,
                "application/json",
                b"{}".to_vec(),
            )
            .await;
        assert_eq!(response.status(), status, "{code}");
        let body: serde_json::Value = response.json().await.expect("json");
        assert_eq!(body["code"], code);
        assert_eq!(body["status"], status);
    }
}

#[tokio::test]
async fn checks_run_in_the_contract_order() {
    let ingest = TestIngest::start().await;
    // Authentication comes before the content type...
    let response = ingest
        .post_raw("/api/plugin/chat", "bogus", "text/plain", b"hello".to_vec())
        .await;
    assert_eq!(response.status(), 401);
    // ...the content type before the size...
    let huge = vec![b' '; 2 * 1024 * 1024];
    let response = ingest
        .post_raw(
            "/api/plugin/chat",
            &ingest.plugin_key,
            "text/plain",
            huge.clone(),
        )
        .await;
    assert_eq!(response.status(), 415);
    // ...the size before parsing...
    let response = ingest
        .post_raw(
            "/api/plugin/chat",
            &ingest.plugin_key,
            "application/json",
            huge,
        )
        .await;
    assert_eq!(response.status(), 413);
    // ...parsing before the rules.
    let response = ingest
        .post_raw(
            "/api/v1/plugin/events",
            &ingest.plugin_key,
            "application/json",
            b"{\"name\":".to_vec(),
        )
        .await;
    assert_eq!(response.status(), 400);
    let body: serde_json::Value = response.json().await.expect("json");
    assert_eq!(body["code"], "malformed_json");
    let (status, body) = ingest
        .post(
            "/api/v1/plugin/events",
            json!({"player_uuid": PLAYER, "name": "chat_spam"}),
        )
        .await;
    assert_eq!(status, 422);
    assert_eq!(body["code"], "reserved_prefix");
    assert_eq!(
        body["detail"],
        "name: event name 'chat_spam' uses the reserved prefix 'chat_'"
    );
    assert_eq!(body["errors"][0]["field"], "name");
}

#[tokio::test]
async fn unknown_paths_and_wrong_methods_are_problems() {
    let ingest = TestIngest::start().await;
    let response = ingest
        .http
        .get(format!("{}/api/plugin/nope", ingest.base))
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), 404);
    assert_eq!(
        response.headers()["content-type"],
        "application/problem+json"
    );

    let response = ingest
        .http
        .get(format!("{}/api/plugin/chat", ingest.base))
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), 405);
    assert_eq!(response.headers()["allow"], "POST");
    let body: serde_json::Value = response.json().await.expect("json");
    assert_eq!(body["status"], 405);
}

#[tokio::test]
async fn a_revoked_key_is_refused_within_two_seconds() {
    let ingest = TestIngest::start().await;
    let key = ingest.add_key(ingest.account_id, KeyKind::Plugin).await;
    ingest.wait_until_accepts(&key).await;
    ingest
        .bucket()
        .await
        .delete(shared::keys::hash_secret(&key))
        .await
        .expect("revoke");
    let revoked_at = tokio::time::Instant::now();
    loop {
        let response = ingest
            .post_raw(
                "/api/plugin/heartbeat",
                &key,
                "application/json",
                b"{}".to_vec(),
            )
            .await;
        if response.status() == 401 {
            break;
        }
        assert!(
            revoked_at.elapsed() < Duration::from_secs(2),
            "revocation not seen within 2 s"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn health_and_metrics_answer() {
    let ingest = TestIngest::start().await;
    for path in ["/healthz", "/readyz"] {
        let response = ingest
            .http
            .get(format!("{}{path}", ingest.base))
            .send()
            .await
            .expect("sent");
        assert_eq!(response.status(), 200, "{path}");
    }
    ingest.post("/api/plugin/heartbeat", json!({"server_id": crate::helpers::SERVER, "tps": 20, "player_count": 1, "max_players": 10})).await;
    let metrics = ingest
        .http
        .get(format!("{}/metrics", ingest.base))
        .send()
        .await
        .expect("sent")
        .text()
        .await
        .expect("text");
    assert!(metrics.contains("http_requests_total"), "{metrics}");
    assert!(
        metrics.contains("ingest_publish_duration_seconds"),
        "{metrics}"
    );
}
