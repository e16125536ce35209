//! `last_used_at`: recorded in memory by ingest and query-api, reported over NATS every
//! `KEY_USAGE_FLUSH_SECS`, and written by query-api in one statement per report.

use chrono::{DateTime, Utc};
use pipeline_tests::{TestStack, eventually};
use reqwest::Method;
use serde_json::{Value, json};
use std::time::Duration;

/// The `last_used_at` of the account's key of `kind`, as listed by the admin API.
async fn last_used(stack: &TestStack, account: &str, kind: &str) -> Option<Option<DateTime<Utc>>> {
    let path = format!("/api/admin/accounts/{account}/keys");
    let (status, body) = stack.call(Method::GET, &path, &stack.admin_key, None).await;
    if status != 200 {
        return None;
    }
    let key = body["items"]
        .as_array()?
        .iter()
        .find(|key| key["kind"] == kind)?
        .clone();
    Some(match &key["last_used_at"] {
        Value::String(at) => Some(at.parse().ok()?),
        _ => None,
    })
}

#[tokio::test]
async fn keys_used_through_ingest_and_query_api_show_when_they_were_last_used() {
    let stack = TestStack::start().await.expect("stack starts");
    let account = stack.create_account("Usage").await.expect("account");
    assert_eq!(
        last_used(&stack, &account.id, "dashboard").await,
        Some(None),
        "an unused key has no last_used_at"
    );
    let before = Utc::now() - chrono::Duration::seconds(1);

    let heartbeat = json!({"server_id": "1a2b3c4d-0000-4000-8000-0000000000c1", "tps": 20,
                           "player_count": 0, "max_players": 20});
    let (status, _) = stack
        .call(
            Method::POST,
            "/api/plugin/heartbeat",
            &account.plugin_key,
            Some(heartbeat),
        )
        .await;
    assert_eq!(status, 202);
    let plugin_used = eventually(Duration::from_secs(10), || async {
        last_used(&stack, &account.id, "plugin").await.flatten()
    })
    .await
    .expect("the plugin key's last_used_at is filled after a flush");
    assert!(plugin_used >= before && plugin_used <= Utc::now());

    let (status, _) = stack
        .call(Method::GET, "/api/servers", &account.dashboard_key, None)
        .await;
    assert_eq!(status, 200);
    let dashboard_used = eventually(Duration::from_secs(10), || async {
        last_used(&stack, &account.id, "dashboard").await.flatten()
    })
    .await
    .expect("the dashboard key's last_used_at is filled after a flush");
    assert!(dashboard_used >= before);
}
