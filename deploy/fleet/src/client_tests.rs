use super::*;
use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::json;
use std::sync::{Arc, Mutex};

/// What the fake service has seen, and the answers it gives in order (the last one repeats).
#[derive(Clone)]
struct Fake {
    seen: Arc<Mutex<Vec<(HeaderMap, Value)>>>,
    answers: Arc<Vec<(u16, Option<&'static str>, Value)>>,
}

async fn handler(
    State(fake): State<Fake>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    let n = {
        let mut seen = fake.seen.lock().expect("lock");
        seen.push((headers, body));
        seen.len() - 1
    };
    let (status, retry_after, body) = fake.answers[n.min(fake.answers.len() - 1)].clone();
    let mut response = (StatusCode::from_u16(status).expect("status"), Json(body)).into_response();
    if let Some(value) = retry_after {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, value.parse().expect("header"));
    }
    response
}

async fn serve(answers: Vec<(u16, Option<&'static str>, Value)>) -> (PluginClient, Fake) {
    let fake = Fake {
        seen: Arc::default(),
        answers: Arc::new(answers),
    };
    let app = axum::Router::new()
        .route("/api/plugin/chat", post(handler))
        .with_state(fake.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    let client = PluginClient::new(&format!("http://{addr}/"), "wdn_plugin_test").expect("client");
    (client, fake)
}

fn batch() -> Value {
    json!([{"id": "0190a0a0-0000-7000-8000-000000000001", "message": "hi"}])
}

#[tokio::test]
async fn a_503_is_retried_after_retry_after_with_the_same_body() {
    let (client, fake) = serve(vec![
        (503, Some("1"), json!({"code": "unavailable"})),
        (
            202,
            None,
            json!({"accepted": 1, "duplicates": 0, "rejected": []}),
        ),
    ])
    .await;
    let started = std::time::Instant::now();
    let outcome = client
        .post("/api/plugin/chat", &batch())
        .await
        .expect("stored");
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "waited for Retry-After"
    );
    assert_eq!(
        outcome,
        WriteOutcome {
            accepted: 1,
            duplicates: 0,
            rejected: vec![],
            retries: 1
        }
    );
    let seen = fake.seen.lock().expect("lock");
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].1, seen[1].1, "the retry resends the same ids");
    let auth = seen[0].0.get(header::AUTHORIZATION).expect("auth header");
    assert_eq!(auth, "Bearer wdn_plugin_test");
}

#[tokio::test]
async fn a_validation_error_is_refused_without_retrying() {
    let rejected = json!([{"index": 0, "code": "validation_failed"}]);
    let (client, fake) = serve(vec![(
        422,
        None,
        json!({"code": "validation_failed", "detail": "no record was valid", "rejected": rejected}),
    )])
    .await;
    let error = client
        .post("/api/plugin/chat", &batch())
        .await
        .expect_err("refused");
    match error {
        PostError::Refused {
            status,
            code,
            detail,
        } => {
            assert_eq!((status, code.as_str()), (422, "validation_failed"));
            assert!(detail.contains("no record was valid"), "{detail}");
        }
        other => panic!("unexpected {other}"),
    }
    assert_eq!(fake.seen.lock().expect("lock").len(), 1);
}

#[tokio::test]
async fn partial_rejections_are_reported() {
    let (client, _fake) = serve(vec![(
        202,
        None,
        json!({"accepted": 3, "duplicates": 1, "rejected": [{"index": 4, "code": "validation_failed"}]}),
    )])
    .await;
    let outcome = client
        .post("/api/plugin/chat", &batch())
        .await
        .expect("stored");
    assert_eq!(
        (outcome.accepted, outcome.duplicates, outcome.rejected.len()),
        (3, 1, 1)
    );
}

#[tokio::test]
async fn an_unreachable_service_is_given_up_on_without_panicking() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    drop(listener);
    let policy = RetryPolicy {
        max_attempts: 4,
        first_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(20),
    };
    let client = PluginClient::new(&format!("http://{addr}"), "k")
        .expect("client")
        .with_policy(policy);
    let started = std::time::Instant::now();
    let error = client
        .post("/api/plugin/chat", &batch())
        .await
        .expect_err("gives up");
    assert!(
        matches!(error, PostError::GaveUp { attempts: 4, .. }),
        "{error}"
    );
    // 10 + 20 + 20 ms of backoff between the four attempts.
    assert!(started.elapsed() >= Duration::from_millis(50));
}

#[test]
fn retry_after_is_bounded() {
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(reqwest::header::RETRY_AFTER, "0".parse().expect("header"));
    assert_eq!(retry_after(&headers), Some(Duration::from_secs(1)));
    headers.insert(
        reqwest::header::RETRY_AFTER,
        "86400".parse().expect("header"),
    );
    assert_eq!(retry_after(&headers), Some(MAX_RETRY_AFTER));
    headers.insert(
        reqwest::header::RETRY_AFTER,
        "soon".parse().expect("header"),
    );
    assert_eq!(retry_after(&headers), None);
}

#[test]
fn a_single_custom_event_answer_counts_as_one() {
    let answer = json!({"id": "x", "name": "crate_opened", "occurred_at": "t", "received_at": "t"});
    assert_eq!(outcome(&answer).accepted, 1);
}
