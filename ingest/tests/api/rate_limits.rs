use crate::helpers::{TestIngest, config};
use async_nats::jetstream;
use ingest::App;
use reqwest::StatusCode;
use tokio_util::sync::CancellationToken;

/// A request that passes the gate (so it counts) but stops at the content-type check, so
/// thousands of them cost no log writes.
async fn counted(http: &reqwest::Client, base: &str, key: &str) -> reqwest::Response {
    http.post(format!("{base}/api/plugin/heartbeat"))
        .bearer_auth(key)
        .header("content-type", "text/plain")
        .body("x")
        .send()
        .await
        .expect("sent")
}

fn header(response: &reqwest::Response, name: &str) -> u64 {
    response.headers()[name]
        .to_str()
        .expect("ascii")
        .parse()
        .expect("number")
}

#[tokio::test]
async fn a_plugin_key_gets_exactly_1000_requests_per_rolling_minute() {
    let ingest = TestIngest::start().await;
    let key = ingest
        .add_key(ingest.account_id, shared::keys::KeyKind::Plugin)
        .await;
    ingest.wait_until_accepts(&key).await;
    // wait_until_accepts spent requests of its own; count from what the server says.
    let first = counted(&ingest.http, &ingest.base, &key).await;
    assert_eq!(first.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(header(&first, "ratelimit-limit"), 1000);
    let mut remaining = header(&first, "ratelimit-remaining");
    while remaining > 0 {
        let response = counted(&ingest.http, &ingest.base, &key).await;
        assert_eq!(response.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
        let now = header(&response, "ratelimit-remaining");
        assert_eq!(now, remaining - 1, "each request counts once");
        remaining = now;
    }
    let refused = counted(&ingest.http, &ingest.base, &key).await;
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    let wait = header(&refused, "retry-after");
    assert!((1..=60).contains(&wait), "true wait, rounded up: {wait}");
    assert_eq!(header(&refused, "ratelimit-remaining"), 0);
    assert_eq!(header(&refused, "ratelimit-reset"), wait);
    let body: serde_json::Value = refused.json().await.expect("problem");
    assert_eq!(body["code"], "rate_limited");
    // Refusals do not count, and another key has its own quota.
    assert_eq!(
        counted(&ingest.http, &ingest.base, &key).await.status(),
        StatusCode::TOO_MANY_REQUESTS
    );
    assert_eq!(
        counted(&ingest.http, &ingest.base, &ingest.plugin_key)
            .await
            .status(),
        StatusCode::UNSUPPORTED_MEDIA_TYPE
    );
    // Authentication still comes first: a bad key is 401, not 429.
    assert_eq!(
        counted(&ingest.http, &ingest.base, "wdn_plugin_nope")
            .await
            .status(),
        StatusCode::UNAUTHORIZED
    );
}

#[tokio::test]
async fn the_quota_holds_across_two_ingest_replicas() {
    let ingest = TestIngest::start().await;
    let shutdown = CancellationToken::new();
    let second = App::build(
        config(ingest.nats.url(), ingest.log.clone(), &ingest.admin_key),
        shutdown.clone(),
    )
    .await
    .expect("second replica");
    let second_base = format!("http://{}", second.local_addr());
    tokio::spawn(second.run_until_stopped(shutdown.clone()));
    let key = ingest
        .add_key(ingest.account_id, shared::keys::KeyKind::Plugin)
        .await;
    ingest.wait_until_accepts(&key).await;
    let bases = [ingest.base.clone(), second_base];
    let mut admitted = 0;
    let mut refused_at = None;
    for i in 0..1100 {
        let response = counted(&ingest.http, &bases[i % 2], &key).await;
        match response.status() {
            StatusCode::UNSUPPORTED_MEDIA_TYPE => admitted += 1,
            StatusCode::TOO_MANY_REQUESTS => {
                refused_at.get_or_insert(i);
            }
            other => panic!("unexpected {other}"),
        }
    }
    // wait_until_accepts used a few of the 1,000 before the loop.
    assert!(
        (990..=1000).contains(&admitted),
        "admitted {admitted} across both replicas"
    );
    assert!(refused_at.is_some());
    shutdown.cancel();
}

#[tokio::test]
async fn without_the_shared_bucket_each_replica_counts_locally() {
    let ingest = TestIngest::start().await;
    let client = async_nats::connect(ingest.nats.url())
        .await
        .expect("connect");
    jetstream::new(client)
        .delete_key_value(&ingest.log.rate_bucket)
        .await
        .expect("delete bucket");
    let response = counted(&ingest.http, &ingest.base, &ingest.plugin_key).await;
    assert_eq!(
        response.status(),
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "requests still flow"
    );
    assert_eq!(
        header(&response, "ratelimit-remaining"),
        999,
        "a fresh local window"
    );
    let metrics = ingest
        .http
        .get(format!("{}/metrics", ingest.base))
        .send()
        .await
        .expect("sent")
        .text()
        .await
        .expect("text");
    assert!(metrics.contains("rate_limit_fallback_total"), "{metrics}");
}
