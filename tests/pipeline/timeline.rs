use pipeline_tests::TestStack;
use reqwest::Method;
use serde_json::{Value, json};

const SERVER: &str = "7d6b4c0e-1d1f-4f7e-9a53-8c1f3f3c2a10";
const PLAYER: &str = "069a79f4-44e9-4726-a5be-fca90e38aaf5";

async fn events(stack: &TestStack, key: &str, query: &str, want: usize) -> Vec<Value> {
    stack.projected().await.expect("the projector catches up");
    let (status, body) = stack
        .call(Method::GET, &format!("/api/v1/events?{query}"), key, None)
        .await;
    assert_eq!(status, 200, "{body}");
    let items = body["items"].as_array().cloned().unwrap_or_default();
    assert!(
        items.len() >= want,
        "{want} events expected for ?{query}, got {items:?}"
    );
    items
}

#[tokio::test]
async fn plugin_writes_reach_the_projected_timeline() {
    let stack = TestStack::start().await.expect("stack starts");
    let account = stack
        .create_account("Pipeline Network")
        .await
        .expect("account");
    let plugin = |path: &'static str, body: Value| {
        let stack = &stack;
        let key = account.plugin_key.clone();
        async move { stack.call(Method::POST, path, &key, Some(body)).await }
    };

    let properties = r#"{"crate":"vote","price":19.990,"big":123456789012345678901234567890}"#;
    let custom = format!(
        r#"{{"player_uuid":"{PLAYER}","name":"crate_opened","properties":{properties},"occurred_at":"2026-11-20T10:00:00+01:00"}}"#
    );
    let response = stack
        .http
        .post(format!("{}/api/v1/plugin/events", stack.base))
        .bearer_auth(&account.plugin_key)
        .header("content-type", "application/json")
        .body(custom)
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), 202);
    let accepted: Value = response.json().await.expect("json");

    let (status, _) = plugin("/api/plugin/sessions", json!({"server_id": SERVER, "player_uuid": PLAYER, "player_name": "Notch", "event": "join", "ip": "198.51.100.4"})).await;
    assert_eq!(status, 202);
    let (status, _) = plugin("/api/plugin/chat", json!([
        {"server_id": SERVER, "player_uuid": PLAYER, "entry_type": "chat", "message": "gg"},
        {"server_id": SERVER, "player_uuid": PLAYER, "entry_type": "command", "message": "/spawn"}
    ])).await;
    assert_eq!(status, 202);
    let (status, _) = plugin(
        "/api/plugin/heartbeat",
        json!({"server_id": SERVER, "tps": 20, "player_count": 1, "max_players": 50}),
    )
    .await;
    assert_eq!(status, 202);

    // Custom events only, by default.
    let custom_only = events(&stack, &account.dashboard_key, "", 1).await;
    assert_eq!(custom_only.len(), 1, "{custom_only:?}");
    let event = &custom_only[0];
    assert_eq!(event["id"], accepted["id"]);
    assert_eq!(event["name"], "crate_opened");
    assert_eq!(event["player_uuid"], PLAYER);
    assert_eq!(
        event["occurred_at"]
            .as_str()
            .map(|t| t.starts_with("2026-11-20T09:00:00")),
        Some(true),
        "{event}"
    );
    assert!(event["seq"].as_i64().expect("seq") > 0);
    // Properties come back exactly as sent, numbers included.
    let response = stack
        .http
        .get(format!("{}/api/v1/events", stack.base))
        .bearer_auth(&account.dashboard_key)
        .send()
        .await
        .expect("sent")
        .text()
        .await
        .expect("text");
    assert!(response.contains(properties), "{response}");

    // Internal events share the timeline.
    let all = events(&stack, &account.dashboard_key, "internal=true", 4).await;
    let mut names: Vec<&str> = all.iter().filter_map(|e| e["name"].as_str()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "chat_command",
            "chat_message",
            "crate_opened",
            "session_join"
        ]
    );
    assert!(
        !serde_json::to_string(&all)
            .expect("json")
            .contains("198.51.100.4"),
        "no IP in clear"
    );

    // Another account sees none of it.
    let other = stack
        .create_account("Other Network")
        .await
        .expect("account");
    let (status, body) = stack
        .call(
            Method::GET,
            "/api/v1/events?internal=true",
            &other.dashboard_key,
            None,
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(body["items"], json!([]));
}

#[tokio::test]
async fn a_retried_write_is_stored_once() {
    let stack = TestStack::start().await.expect("stack starts");
    let account = stack
        .create_account("Retry Network")
        .await
        .expect("account");
    let id = uuid::Uuid::now_v7();
    let body = json!({"id": id, "player_uuid": PLAYER, "name": "vote_cast"});
    for _ in 0..3 {
        let (status, _) = stack
            .call(
                Method::POST,
                "/api/v1/plugin/events",
                &account.plugin_key,
                Some(body.clone()),
            )
            .await;
        assert_eq!(status, 202);
    }
    // Also as part of a later batch with a new record: the duplicate is still stored once.
    let batch = json!([body, {"player_uuid": PLAYER, "name": "vote_cast"}]);
    let (status, _) = stack
        .call(
            Method::POST,
            "/api/v1/plugin/events",
            &account.plugin_key,
            Some(batch),
        )
        .await;
    assert_eq!(status, 202);
    let items = events(&stack, &account.dashboard_key, "name=vote_cast", 2).await;
    assert_eq!(items.len(), 2, "{items:?}");
    assert_eq!(items.iter().filter(|e| e["id"] == json!(id)).count(), 1);
}
