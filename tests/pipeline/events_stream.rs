use pipeline_tests::TestStack;
use pipeline_tests::sse::SseStream;
use reqwest::Method;
use serde_json::{Value, json};
use std::time::Duration;

const PLAYER: &str = "069a79f4-44e9-4726-a5be-fca90e38aaf5";
/// How long an event may take to arrive (generous: the whole suite runs at once).
const WAIT: Duration = pipeline_tests::WAIT;

async fn post_event(stack: &TestStack, key: &str, name: &str, properties: Value) -> Value {
    let body = json!({"player_uuid": PLAYER, "name": name, "properties": properties});
    let (status, accepted) = stack
        .call(Method::POST, "/api/v1/plugin/events", key, Some(body))
        .await;
    assert_eq!(status, 202, "{accepted}");
    accepted
}

#[tokio::test]
async fn new_events_stream_live_with_filters_and_resume_without_gaps() {
    let stack = TestStack::start().await.expect("stack");
    let account = stack.create_account("Live").await.expect("account");
    let url = format!(
        "{}/api/v1/events/stream?name=level_up&name=quest_done",
        stack.base
    );
    let mut stream = SseStream::open(&stack.http, &url, &account.dashboard_key, None)
        .await
        .expect("open");

    post_event(&stack, &account.plugin_key, "crate_opened", json!({})).await;
    // Sent as raw text: the stream must carry the properties exactly as written.
    let raw =
        format!(r#"{{"player_uuid":"{PLAYER}","name":"level_up","properties":{{"level": 2.50}}}}"#);
    let response = stack
        .http
        .post(format!("{}/api/v1/plugin/events", stack.base))
        .bearer_auth(&account.plugin_key)
        .header("content-type", "application/json")
        .body(raw)
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), 202);
    let first: Value = response.json().await.expect("json");
    let event = stream.next(WAIT).await.expect("live event");
    let data: Value = serde_json::from_str(&event.data).expect("json");
    assert_eq!(data["name"], "level_up", "the filter drops crate_opened");
    assert_eq!(data["id"], first["id"]);
    assert!(
        event.data.contains(r#""properties":{"level": 2.50}"#),
        "{}",
        event.data
    );
    assert_eq!(
        event.id.as_deref(),
        Some(data["seq"].to_string().as_str()),
        "SSE id is the seq"
    );
    let last_id = event.id.expect("id");
    drop(stream);

    // While disconnected: two matching events and one that is filtered out.
    post_event(
        &stack,
        &account.plugin_key,
        "quest_done",
        json!({"quest": 1}),
    )
    .await;
    post_event(&stack, &account.plugin_key, "crate_opened", json!({})).await;
    post_event(&stack, &account.plugin_key, "level_up", json!({"level": 3})).await;

    let mut resumed = SseStream::open(&stack.http, &url, &account.dashboard_key, Some(&last_id))
        .await
        .expect("reopen");
    let mut names = Vec::new();
    let mut seqs = Vec::new();
    for _ in 0..2 {
        let event = resumed.next(WAIT).await.expect("backfilled event");
        let data: Value = serde_json::from_str(&event.data).expect("json");
        names.push(data["name"].as_str().expect("name").to_owned());
        seqs.push(data["seq"].as_i64().expect("seq"));
    }
    assert_eq!(
        names,
        ["quest_done", "level_up"],
        "no gap, no repeat, in order"
    );
    assert!(seqs[0] > last_id.parse::<i64>().expect("seq") && seqs[1] > seqs[0]);

    // And live events keep coming after the backfill, exactly once.
    post_event(
        &stack,
        &account.plugin_key,
        "quest_done",
        json!({"quest": 2}),
    )
    .await;
    let event = resumed.next(WAIT).await.expect("live after backfill");
    let data: Value = serde_json::from_str(&event.data).expect("json");
    assert_eq!(data["properties"]["quest"], 2);
}

#[tokio::test]
async fn a_stream_never_carries_another_accounts_events() {
    let stack = TestStack::start().await.expect("stack");
    let ours = stack.create_account("Ours").await.expect("account");
    let theirs = stack.create_account("Theirs").await.expect("account");
    let url = format!("{}/api/v1/events/stream?internal=true", stack.base);
    let mut stream = SseStream::open(&stack.http, &url, &ours.dashboard_key, None)
        .await
        .expect("open");

    post_event(&stack, &theirs.plugin_key, "secret_thing", json!({})).await;
    let (status, _) = stack
        .call(Method::POST, "/api/plugin/chat", &theirs.plugin_key,
            Some(json!({"server_id": PLAYER, "player_uuid": PLAYER, "entry_type": "chat", "message": "theirs"})))
        .await;
    assert_eq!(status, 202);
    post_event(&stack, &ours.plugin_key, "marker", json!({})).await;

    let event = stream.next(WAIT).await.expect("our event");
    let data: Value = serde_json::from_str(&event.data).expect("json");
    assert_eq!(
        data["name"], "marker",
        "the other account's events never reach this stream"
    );
}

#[tokio::test]
async fn the_stream_needs_a_dashboard_key_and_valid_resume_id() {
    let stack = TestStack::start().await.expect("stack");
    let account = stack.create_account("Keys").await.expect("account");
    let url = format!("{}/api/v1/events/stream", stack.base);
    let response = stack
        .http
        .get(&url)
        .bearer_auth(&account.plugin_key)
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), 403);
    let response = stack
        .http
        .get(&url)
        .bearer_auth(&account.dashboard_key)
        .header("last-event-id", "yesterday")
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), 422);
}

#[tokio::test]
async fn a_revoked_key_stops_streaming_chat_within_two_seconds() {
    let stack = TestStack::start().await.expect("stack");
    let account = stack.create_account("Revoked").await.expect("account");
    let url = format!("{}/api/v1/events/stream?internal=true", stack.base);
    // The dashboard key reaches query-api through its own watch of the key bucket.
    let mut stream = pipeline_tests::eventually(WAIT, || async {
        SseStream::open(&stack.http, &url, &account.dashboard_key, None)
            .await
            .ok()
    })
    .await
    .expect("the stream opens");
    let chat = |message: &'static str| {
        let body = json!({"server_id": PLAYER, "player_uuid": PLAYER, "entry_type": "chat",
            "message": message});
        stack.call(
            Method::POST,
            "/api/plugin/chat",
            &account.plugin_key,
            Some(body),
        )
    };
    assert_eq!(chat("before").await.0, 202);
    let event = stream.next(WAIT).await.expect("the chat line");
    let data: Value = serde_json::from_str(&event.data).expect("json");
    assert_eq!(data["name"], "chat_message");

    let (status, keys) = stack
        .call(
            Method::GET,
            &format!("/api/admin/accounts/{}/keys", account.id),
            &stack.admin_key,
            None,
        )
        .await;
    assert_eq!(status, 200, "{keys}");
    let dashboard = keys["items"]
        .as_array()
        .and_then(|items| items.iter().find(|k| k["kind"] == "dashboard"))
        .and_then(|k| k["id"].as_str())
        .expect("the dashboard key")
        .to_owned();
    let (status, _) = stack
        .call(
            Method::DELETE,
            &format!("/api/admin/keys/{dashboard}"),
            &stack.admin_key,
            None,
        )
        .await;
    assert_eq!(status, 204);
    let revoked_at = std::time::Instant::now();
    // Written just after the revocation: it may still be streamed before the revocation
    // reaches query-api (the contract allows 2 s), never after `revoked`.
    assert_eq!(chat("after").await.0, 202);
    let event = loop {
        let event = stream
            .next(Duration::from_secs(2).saturating_sub(revoked_at.elapsed()))
            .await
            .expect("a revoked event within 2 s");
        if event.event != "message" {
            break event;
        }
    };
    assert_eq!(event.event, "revoked", "{event:?}");
    let ended = stream
        .next(Duration::from_secs(2).saturating_sub(revoked_at.elapsed()))
        .await
        .expect_err("nothing after revoked");
    assert!(ended.to_string().contains("stream ended"), "{ended}");
    assert!(revoked_at.elapsed() < Duration::from_secs(2));
}
