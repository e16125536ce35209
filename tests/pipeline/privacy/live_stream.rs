//! query-api's live stream reads the log itself: it opens the sealed fields of what
//! it sends live and in a `Last-Event-ID` backfill, and once a player's key is destroyed its
//! backfill sends that player's fields erased, while other players' stay.

use pipeline_tests::sse::SseStream;
use pipeline_tests::{TestStack, eventually};
use reqwest::Method;
use serde_json::{Value, json};
use shared::privacy::PrivacyConfig;
use std::time::Duration;
use uuid::Uuid;

/// How long an event may take to arrive (generous: the whole suite runs at once).
const WAIT: Duration = pipeline_tests::WAIT;
const ERASED: &str = "11111111-2222-4333-8444-555555555555";
const KEPT: &str = "66666666-7777-4888-8999-aaaaaaaaaaaa";

/// The data of the next `count` chat events of `stream`.
async fn chat_events(stream: &mut SseStream, count: usize) -> anyhow::Result<Vec<Value>> {
    let mut events = Vec::new();
    while events.len() < count {
        let event = stream.next(WAIT).await?;
        let data: Value = serde_json::from_str(&event.data)?;
        if data["name"] == "chat_message" {
            events.push(data);
        }
    }
    Ok(events)
}

/// (player, message, player_name) of each chat event.
fn said(events: &[Value]) -> Vec<(String, Value, Value)> {
    events
        .iter()
        .map(|e| {
            let p = &e["properties"];
            (
                e["player_uuid"].as_str().unwrap_or_default().to_owned(),
                p["message"].clone(),
                p["player_name"].clone(),
            )
        })
        .collect()
}

#[tokio::test]
async fn the_live_stream_and_its_backfill_open_sealed_fields_and_erase_destroyed_ones() {
    let stack = TestStack::start().await.expect("stack");
    let account = stack.create_account("Live privacy").await.expect("account");
    let url = format!("{}/api/v1/events/stream?internal=true", stack.base);
    let key = &account.dashboard_key;
    let mut live = eventually(WAIT, || async {
        SseStream::open(&stack.http, &url, key, None).await.ok()
    })
    .await
    .expect("the stream opens");

    // A marker before the chat: backfills resume right after it.
    let (status, _) = stack
        .call(
            Method::POST,
            "/api/v1/plugin/events",
            &account.plugin_key,
            Some(json!({"player_uuid": KEPT, "name": "marker", "properties": {}})),
        )
        .await;
    assert_eq!(status, 202);
    let marker = live.next(WAIT).await.expect("the marker");
    let after = marker.id.expect("an event id");
    let chat = json!([
        {"server_id": KEPT, "player_uuid": ERASED, "player_name": "Pat", "entry_type": "chat",
         "message": "call me on 555-0100"},
        {"server_id": KEPT, "player_uuid": KEPT, "player_name": "Quinn", "entry_type": "chat",
         "message": "hello"}]);
    let (status, body) = stack
        .call(
            Method::POST,
            "/api/plugin/chat",
            &account.plugin_key,
            Some(chat),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    let clear = vec![
        (
            ERASED.to_owned(),
            json!("call me on 555-0100"),
            json!("Pat"),
        ),
        (KEPT.to_owned(), json!("hello"), json!("Quinn")),
    ];
    let sent_live = chat_events(&mut live, 2)
        .await
        .expect("two chat lines live");
    assert_eq!(said(&sent_live), clear, "sent live in clear");
    let mut backfill = SseStream::open(&stack.http, &url, key, Some(&after))
        .await
        .expect("resumes");
    let backfilled = chat_events(&mut backfill, 2).await.expect("backfilled");
    assert_eq!(said(&backfilled), clear, "backfilled in clear");

    // Another process of the deployment destroys Pat's key; query-api had it cached.
    let nats = async_nats::connect(stack.nats.url()).await.expect("nats");
    let keyring = PrivacyConfig::from_vars(&stack.vars)
        .expect("the stack's privacy settings")
        .keyring(&async_nats::jetstream::new(nats), &stack.event_log)
        .await
        .expect("a keyring");
    let account_id: Uuid = account.id.parse().expect("an account id");
    keyring
        .destroy_player(account_id, ERASED.parse().expect("uuid"))
        .await
        .expect("destroyed");

    let erased = eventually(WAIT, || async {
        let mut stream = SseStream::open(&stack.http, &url, key, Some(&after))
            .await
            .ok()?;
        let events = said(&chat_events(&mut stream, 2).await.ok()?);
        (events[0].1 == json!("")).then_some(events)
    })
    .await
    .expect("the backfill sends the destroyed player's text erased");
    assert_eq!(
        erased,
        [
            (ERASED.to_owned(), json!(""), Value::Null),
            (KEPT.to_owned(), json!("hello"), json!("Quinn")),
        ]
    );
}
