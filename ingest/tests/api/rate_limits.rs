use crate::helpers::{TestIngest, config};
use async_nats::jetstream;
use futures::StreamExt;
use ingest::App;
use reqwest::StatusCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
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

/// Polls `base` until it knows `key` (each replica learns keys from the key bucket on its own).
async fn wait_until_known(http: &reqwest::Client, base: &str, key: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let status = counted(http, base, key).await.status();
        if status != StatusCode::UNAUTHORIZED && status != StatusCode::SERVICE_UNAVAILABLE {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{base} never accepted the key (last status {status})"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// What one burst got: admitted requests, and each refusal's `Retry-After`.
#[derive(Default)]
struct Burst {
    admitted: usize,
    retry_after: Vec<u64>,
    other: Vec<StatusCode>,
}

/// Sends `total` requests with `key` over `connections` connections (each its own client,
/// so its own connection), spread evenly over `bases`, all at once.
async fn burst(bases: &[String], key: &str, total: usize, connections: usize) -> Burst {
    let next = Arc::new(AtomicUsize::new(0));
    let workers = (0..connections).map(|worker| {
        let base = bases[worker % bases.len()].clone();
        let key = key.to_owned();
        let next = Arc::clone(&next);
        tokio::spawn(async move {
            let http = reqwest::Client::builder()
                .pool_max_idle_per_host(1)
                .build()
                .expect("client");
            let mut seen = Burst::default();
            while next.fetch_add(1, Ordering::Relaxed) < total {
                let response = counted(&http, &base, &key).await;
                match response.status() {
                    StatusCode::UNSUPPORTED_MEDIA_TYPE => seen.admitted += 1,
                    StatusCode::TOO_MANY_REQUESTS => {
                        seen.retry_after.push(header(&response, "retry-after"));
                    }
                    other => seen.other.push(other),
                }
            }
            seen
        })
    });
    let mut all = Burst::default();
    for seen in futures::future::join_all(workers).await {
        let seen = seen.expect("worker");
        all.admitted += seen.admitted;
        all.retry_after.extend(seen.retry_after);
        all.other.extend(seen.other);
    }
    all
}

/// A client may spend its whole quota at once, whatever the concurrency: 1,050 requests on a
/// fresh key, 64 connections over two replicas, get exactly 1,000 through, every time, and
/// every refusal gives the true wait (the old limiter gave up on a contended log after a fixed
/// number of compare-and-set attempts and refused with `Retry-After: 1` while quota was left).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_concurrent_burst_over_two_replicas_gets_exactly_the_quota() {
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
    let _stop = shutdown.drop_guard();
    let bases = [ingest.base.clone(), second_base];
    let bucket = jetstream::new(
        async_nats::connect(ingest.nats.url())
            .await
            .expect("connect"),
    )
    .get_key_value(&ingest.log.rate_bucket)
    .await
    .expect("rate bucket");

    for round in 1..=3 {
        let key = ingest
            .add_key(ingest.account_id, shared::keys::KeyKind::Plugin)
            .await;
        for base in &bases {
            wait_until_known(&ingest.http, base, &key).await;
        }
        // Learning the key spent a request on each replica: forget every window, so the
        // burst meets a fresh quota.
        let windows: Vec<String> = bucket
            .keys()
            .await
            .expect("keys")
            .map(|k| k.expect("key"))
            .collect()
            .await;
        for window in windows {
            bucket.purge(&window).await.expect("purge");
        }

        let seen = burst(&bases, &key, 1050, 64).await;
        assert!(seen.other.is_empty(), "round {round}: {:?}", seen.other);
        assert_eq!(
            (seen.admitted, seen.retry_after.len()),
            (1000, 50),
            "round {round}: exactly the quota, over both replicas"
        );
        // No refusal while quota was left: each says to wait until the burst's first
        // requests leave the window, most of a minute away.
        assert!(
            seen.retry_after.iter().all(|&wait| wait >= 30),
            "round {round}: {:?}",
            seen.retry_after
        );
    }
}
