//! `last_used_at`: recorded in memory by ingest and query-api, reported over NATS every
//! `KEY_USAGE_FLUSH_SECS`, and written by query-api in one statement per report.

use chrono::{DateTime, Utc};
use pipeline_tests::{TestStack, WAIT, eventually};
use reqwest::Method;
use serde_json::{Value, json};

/// The `last_used_at` of the first key of the account that `which` picks, as listed by the
/// admin API.
async fn last_used(
    stack: &TestStack,
    account: &str,
    which: impl Fn(&Value) -> bool,
) -> Option<Option<DateTime<Utc>>> {
    let path = format!("/api/admin/accounts/{account}/keys");
    let (status, body) = stack.call(Method::GET, &path, &stack.admin_key, None).await;
    if status != 200 {
        return None;
    }
    let key = body["items"]
        .as_array()?
        .iter()
        .find(|key| which(key))?
        .clone();
    Some(match &key["last_used_at"] {
        Value::String(at) => Some(at.parse().ok()?),
        _ => None,
    })
}

#[tokio::test]
async fn keys_used_through_ingest_and_query_api_show_when_they_were_last_used() {
    let stack = TestStack::start().await.expect("stack starts");
    // The harness uses both keys of a new account (it waits until each one works) and usage is
    // flushed every second, so from here on any use may be the one that shows.
    let before = Utc::now() - chrono::Duration::seconds(1);
    let account = stack.create_account("Usage").await.expect("account");
    let (status, unused) = stack
        .call(
            Method::POST,
            &format!("/api/admin/accounts/{}/keys", account.id),
            &stack.admin_key,
            Some(json!({"kind": "dashboard", "label": "never used"})),
        )
        .await;
    assert_eq!(status, 201, "{unused}");
    let unused = unused["id"].clone();
    let is_unused = |key: &Value| key["id"] == unused;
    assert_eq!(
        last_used(&stack, &account.id, is_unused).await,
        Some(None),
        "an unused key has no last_used_at"
    );

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
    let plugin_used = eventually(WAIT, || async {
        last_used(&stack, &account.id, |key| key["kind"] == "plugin")
            .await
            .flatten()
    })
    .await
    .expect("the plugin key's last_used_at is filled after a flush");
    assert!(plugin_used >= before && plugin_used <= Utc::now());

    let (status, _) = stack
        .call(Method::GET, "/api/servers", &account.dashboard_key, None)
        .await;
    assert_eq!(status, 200);
    let used_dashboard = |key: &Value| key["kind"] == "dashboard" && !is_unused(key);
    let dashboard_used = eventually(WAIT, || async {
        last_used(&stack, &account.id, used_dashboard)
            .await
            .flatten()
    })
    .await
    .expect("the dashboard key's last_used_at is filled after a flush");
    assert!(dashboard_used >= before);
    // Flushes have come and gone meanwhile: the key nobody used still shows none.
    assert_eq!(
        last_used(&stack, &account.id, is_unused).await,
        Some(None),
        "a flush stamped a key nobody used"
    );
}
