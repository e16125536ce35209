//! The erasure test's reads: every source that can name a player, each as text.

use super::{EVE, KIM};
use crate::dashboard::Network;
use crate::member::Member;
use pipeline_tests::sse::SseStream;
use pipeline_tests::{TestAccount, TestStack, eventually};
use reqwest::Method;
use serde_json::{Value, json};
use std::time::Duration;

/// A new dashboard key of `account` (each round of reads gets its own: 60 reads a minute).
async fn fresh_key(stack: &TestStack, account: &TestAccount) -> String {
    let path = format!("/api/admin/accounts/{}/keys", account.id);
    let body = json!({"kind": "dashboard", "label": "erasure reads"});
    let (status, key) = stack
        .call(Method::POST, &path, &stack.admin_key, Some(body))
        .await;
    assert_eq!(status, 201, "{key}");
    let key = key["key"].as_str().expect("a key").to_owned();
    let works = eventually(Duration::from_secs(10), || async {
        let (status, _) = stack.call(Method::GET, "/api/servers", &key, None).await;
        (status == 200).then_some(())
    })
    .await;
    assert!(works.is_some(), "the new key never worked");
    key
}

/// Every dashboard read that can name a player, the player page, both exports and the SSE
/// backfill from the start, as one text per source.
pub(super) async fn everything(net: &Network, owner: &Member) -> Vec<(String, String)> {
    let stack = &net.stack;
    let key = fresh_key(stack, &net.account).await;
    let mut paths = vec![
        "/api/players?limit=500".to_owned(),
        "/api/players?search=Eve".to_owned(),
        "/api/players?search=evie".to_owned(),
        "/api/punishments?limit=500".to_owned(),
        "/api/flags?limit=500".to_owned(),
        "/api/chat?limit=500".to_owned(),
        "/api/staff".to_owned(),
        "/api/staff/leaderboard".to_owned(),
        "/api/overview".to_owned(),
        "/api/v1/events?internal=true&limit=500".to_owned(),
    ];
    for player in [EVE, KIM] {
        for tail in ["", "/punishments", "/flags", "/chatlog", "/notes", "/alts"] {
            paths.push(format!("/api/players/{player}{tail}"));
        }
    }
    let mut texts = Vec::new();
    for path in paths {
        let (status, body) = stack.call(Method::GET, &path, &key, None).await;
        assert_eq!(status, 200, "GET {path}: {body}");
        texts.push((path, body.to_string()));
    }
    for player in [EVE, KIM] {
        let path = format!("/players/{player}");
        let (status, html) = owner.page(&path).await;
        assert_eq!(status, 200, "{path}");
        texts.push((path, html));
        let path = format!(
            "/api/admin/accounts/{}/players/{player}/export",
            net.account.id
        );
        let answer = stack
            .http
            .get(format!("{}{path}", stack.base))
            .bearer_auth(&stack.admin_key)
            .send()
            .await
            .expect("the export answers");
        assert_eq!(answer.status(), 200, "{path}");
        texts.push((path, answer.text().await.expect("the export's body")));
    }
    texts.push(("SSE backfill".to_owned(), backfill(net, &key).await));
    texts
}

/// The live stream resumed from the start (`Last-Event-ID: 0`): every event of the log, as
/// the stream's backfill (opened from the log by query-api) sends it.
async fn backfill(net: &Network, key: &str) -> String {
    let stack = &net.stack;
    let (status, newest) = stack
        .call(
            Method::GET,
            "/api/v1/events?internal=true&limit=1",
            key,
            None,
        )
        .await;
    assert_eq!(status, 200, "{newest}");
    let last_seq = newest["items"][0]["seq"]
        .as_i64()
        .expect("the newest event's seq");
    let url = format!("{}/api/v1/events/stream?internal=true", stack.base);
    let mut stream = SseStream::open(&stack.http, &url, key, Some("0"))
        .await
        .expect("the stream opens");
    let mut text = String::new();
    loop {
        let event = stream
            .next(Duration::from_secs(10))
            .await
            .expect("the backfill reaches the newest event");
        text.push_str(&event.data);
        text.push('\n');
        let data: Value = serde_json::from_str(&event.data).unwrap_or(Value::Null);
        if data["seq"].as_i64() == Some(last_seq) {
            return text;
        }
    }
}
