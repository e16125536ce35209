//! The clients against a tiny local axum server that answers from a script.

use super::*;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use uuid::Uuid;

/// One request the fake saw.
#[derive(Debug, Clone)]
struct Seen {
    uri: Uri,
    headers: HeaderMap,
    body: Value,
}

/// The answers, in order; the last one repeats.
type Script = Vec<(u16, Option<&'static str>, Value)>;

#[derive(Clone)]
struct Fake {
    seen: Arc<Mutex<Vec<Seen>>>,
    answers: Arc<Script>,
}

impl Fake {
    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().expect("lock").clone()
    }
}

async fn answer(State(fake): State<Fake>, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let n = {
        let mut seen = fake.seen.lock().expect("lock");
        seen.push(Seen { uri, headers, body });
        seen.len() - 1
    };
    let (status, retry_after, body) = fake.answers[n.min(fake.answers.len() - 1)].clone();
    let status = StatusCode::from_u16(status).expect("status");
    let mut response = (status, axum::Json(body)).into_response();
    if let Some(value) = retry_after {
        let value = value.parse().expect("header");
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}

async fn serve(answers: Script) -> (String, Fake) {
    let fake = Fake {
        seen: Arc::default(),
        answers: Arc::new(answers),
    };
    let app = axum::Router::new()
        .fallback(answer)
        .with_state(fake.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/"), fake)
}

fn accepted(n: u64) -> (u16, Option<&'static str>, Value) {
    (
        202,
        None,
        json!({"accepted": n, "duplicates": 0, "rejected": []}),
    )
}

fn ids(body: &Value) -> Vec<String> {
    body.as_array()
        .expect("a batch")
        .iter()
        .map(|record| {
            record["id"]
                .as_str()
                .expect("every record has an id")
                .to_owned()
        })
        .collect()
}

fn chat(text: &str) -> ChatEntry {
    ChatEntry::new(Uuid::now_v7(), Uuid::now_v7(), ChatEntryType::Chat, text)
}

fn fast_policy(max_attempts: u32) -> RetryPolicy {
    RetryPolicy {
        max_attempts,
        first_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(20),
        ..RetryPolicy::default()
    }
}

#[tokio::test]
async fn a_429_is_retried_after_retry_after_with_the_same_ids() {
    let limited = json!({"code": "rate_limited", "status": 429});
    let (base, fake) = serve(vec![(429, Some("1"), limited), accepted(2)]).await;
    let client = PluginClient::new(&base, "wdn_plugin_test").expect("client");
    let started = Instant::now();
    let report = client
        .send_batch(vec![chat("a"), chat("b")])
        .await
        .expect("stored");
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "Retry-After honoured"
    );
    assert_eq!((report.accepted, report.retries), (2, 1));
    let seen = fake.seen();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].uri.path(), "/api/plugin/chat");
    assert_eq!(ids(&seen[0].body).len(), 2);
    assert_eq!(
        ids(&seen[0].body),
        ids(&seen[1].body),
        "the retry resends the same ids"
    );
    assert_eq!(seen[0].body, seen[1].body);
    let auth = seen[0].headers.get(header::AUTHORIZATION).expect("auth");
    assert_eq!(auth, "Bearer wdn_plugin_test");
}

#[tokio::test]
async fn a_caller_id_is_kept_and_a_503_is_retried() {
    let (base, fake) = serve(vec![(503, Some("1"), json!({})), accepted(1)]).await;
    let client = PluginClient::new(&base, "k").expect("client");
    let id = Uuid::now_v7();
    let record = ChatEntry {
        id: Some(id),
        ..chat("mine")
    };
    client.send(record).await.expect("stored");
    let seen = fake.seen();
    assert_eq!(ids(&seen[0].body), vec![id.to_string()]);
    assert_eq!(seen[0].body, seen[1].body);
}

#[tokio::test]
async fn a_refusal_carries_the_problem_and_is_not_retried() {
    let problem = json!({"type": "about:blank", "title": "Validation failed", "status": 422,
        "code": "validation_failed", "detail": "no record was valid",
        "rejected": [{"index": 0, "code": "validation_failed",
                      "errors": [{"field": "message", "message": "too long"}]}]});
    let (base, fake) = serve(vec![(422, None, problem)]).await;
    let client = PluginClient::new(&base, "k").expect("client");
    let error = client.send(chat("x")).await.expect_err("refused");
    assert_eq!(error.status(), Some(422));
    let problem = error.problem().expect("problem");
    assert_eq!(problem.code, "validation_failed");
    assert_eq!(problem.rejected[0].errors[0].field, "message");
    assert_eq!(fake.seen().len(), 1);
}

#[tokio::test]
async fn an_unreachable_service_is_given_up_on_after_bounded_attempts() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    drop(listener);
    let client = PluginClient::new(&format!("http://{addr}"), "k")
        .expect("client")
        .with_retry_policy(fast_policy(4));
    let started = Instant::now();
    let error = client.send(chat("x")).await.expect_err("gives up");
    assert!(
        matches!(error, SdkError::GaveUp { attempts: 4, .. }),
        "{error}"
    );
    // 10 + 20 + 20 ms of backoff between the four attempts.
    assert!(started.elapsed() >= Duration::from_millis(50));
}

#[tokio::test]
async fn batches_past_the_limit_are_refused_locally() {
    let client = PluginClient::new("http://127.0.0.1:9", "k").expect("client");
    let error = client.send_batch(Vec::<ChatEntry>::new()).await;
    assert!(matches!(error, Err(SdkError::BatchSize(0))));
    let error = client.send_batch(vec![chat("x"); MAX_BATCH + 1]).await;
    assert!(matches!(error, Err(SdkError::BatchSize(1001))));
}

#[tokio::test]
async fn the_tracker_queues_without_http_and_sends_batches_on_flush() {
    let (base, fake) = serve(vec![accepted(2)]).await;
    let client = PluginClient::new(&base, "k").expect("client");
    let config = TrackerConfig {
        sync_interval: Duration::from_secs(3600),
        capacity: 5,
        batch_size: 2,
    };
    let tracker = EventTracker::spawn(client, config);
    let player = Uuid::now_v7();
    for i in 0..5 {
        let event = CustomEvent::new(player, "quest_done").with_properties(json!({"n": i}));
        tracker.track(event).expect("queued");
    }
    let full = tracker.track(CustomEvent::new(player, "quest_done"));
    assert!(matches!(full, Err(TrackError::QueueFull(_))));
    assert_eq!(tracker.stats().dropped, 1);
    assert!(fake.seen().is_empty(), "track never does HTTP");

    tracker.flush().await;
    let seen = fake.seen();
    let sizes: Vec<usize> = seen.iter().map(|s| ids(&s.body).len()).collect();
    assert_eq!(sizes, vec![2, 2, 1]);
    assert!(seen.iter().all(|s| s.uri.path() == "/api/v1/plugin/events"));
    let stats = tracker.shutdown().await;
    assert_eq!((stats.accepted, stats.lost), (6, 0), "2 per answered batch");
    let closed = tracker.track(CustomEvent::new(player, "late"));
    assert!(matches!(closed, Err(TrackError::Closed(_))));
}

#[tokio::test]
async fn the_tracker_resends_the_same_ids_after_a_failed_cycle() {
    let (base, fake) = serve(vec![(503, Some("1"), json!({})), accepted(1)]).await;
    let client = PluginClient::new(&base, "k")
        .expect("client")
        .with_retry_policy(fast_policy(1));
    let config = TrackerConfig {
        sync_interval: Duration::from_millis(50),
        ..TrackerConfig::default()
    };
    let tracker = EventTracker::spawn(client, config);
    tracker
        .track(CustomEvent::new(Uuid::now_v7(), "crate_opened"))
        .expect("queued");
    // The sync cycle sends it on its own; wait for the second attempt by polling.
    let deadline = Instant::now() + Duration::from_secs(10);
    while fake.seen().len() < 2 {
        assert!(Instant::now() < deadline, "the next cycle never retried");
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let seen = fake.seen();
    assert_eq!(ids(&seen[0].body), ids(&seen[1].body));
    assert_eq!(tracker.shutdown().await.accepted, 1);
}

#[tokio::test]
async fn dashboard_reads_build_queries_and_map_404_to_none() {
    let page = json!({"items": [], "next_cursor": null});
    let (base, fake) = serve(vec![
        (404, None, json!({"code": "not_found"})),
        (200, None, page),
    ])
    .await;
    let client = DashboardClient::new(&base, "wdn_dash_x").expect("client");
    let player = Uuid::now_v7();
    assert_eq!(client.player(player).await.expect("read"), None);
    let query = EventQuery {
        names: vec!["a".into(), "b".into()],
        internal: true,
        limit: Some(10),
        ..EventQuery::default()
    };
    let events = client.events(&query).await.expect("events");
    assert!(events.items.is_empty() && events.next_cursor.is_none());
    let seen = fake.seen();
    assert_eq!(seen[0].uri.path(), format!("/api/players/{player}"));
    assert_eq!(
        seen[1].uri.query(),
        Some("name=a&name=b&internal=true&limit=10")
    );
}
