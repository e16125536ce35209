use crate::helpers::{SERVER, TestIngest, config};
use async_nats::jetstream;
use futures::StreamExt;
use serde_json::json;
use shared::event_log::EventLogConfig;
use shared::keys::KeyKind;
use std::time::{Duration, Instant};
use test_support::NatsServer;
use tokio_util::sync::CancellationToken;

fn heartbeat() -> serde_json::Value {
    json!({"server_id": SERVER, "tps": 20, "player_count": 1, "max_players": 10})
}

/// Refused writes sent while the broker is down, and how much they may grow the RSS.
const REFUSALS: usize = 2_000;
const MAX_GROWTH_KIB: u64 = 4 * 1024;

/// Plugin keys the refusals are spread over: each key's quota is 1,000 requests a minute
/// (the warm-up and three rounds of refusals: 6,200 requests).
const KEYS: usize = 8;

/// Sends `n` heartbeats, 64 at a time, and checks each is refused with 503 and Retry-After.
async fn refuse(ingest: &TestIngest, keys: &[String], n: usize) {
    let body = heartbeat().to_string().into_bytes();
    futures::stream::iter(0..n)
        .for_each_concurrent(64, |i| {
            let (body, key) = (body.clone(), &keys[i % keys.len()]);
            async move {
                let response = ingest
                    .post_raw("/api/plugin/heartbeat", key, "application/json", body)
                    .await;
                assert_eq!(response.status(), 503);
                assert!(response.headers().contains_key("retry-after"));
            }
        })
        .await;
}

/// This process's resident set (VmRSS in /proc/self/status), in KiB.
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .expect("/proc/self/status")
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/self/status")
}

#[tokio::test]
async fn with_the_broker_down_writes_get_a_fast_503_and_recover_after_restart() {
    let mut ingest = TestIngest::start().await;
    assert_eq!(
        ingest.post("/api/plugin/heartbeat", heartbeat()).await.0,
        202
    );
    let mut keys = Vec::new();
    for _ in 0..KEYS {
        let key = ingest.add_key(ingest.account_id, KeyKind::Plugin).await;
        ingest.wait_until_accepts(&key).await;
        keys.push(key);
    }
    ingest.nats.kill();
    ingest.wait_until_log_down().await;

    let started = Instant::now();
    let response = ingest
        .post_raw(
            "/api/plugin/heartbeat",
            &ingest.plugin_key,
            "application/json",
            heartbeat().to_string().into_bytes(),
        )
        .await;
    assert_eq!(response.status(), 503);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "503 within the publish timeout"
    );
    let retry_after: u64 = response.headers()["retry-after"]
        .to_str()
        .expect("ascii")
        .parse()
        .expect("seconds");
    assert!(retry_after >= 1);
    let body: serde_json::Value = response.json().await.expect("json");
    assert_eq!(body["code"], "unavailable");
    assert!(
        !body["detail"].as_str().expect("detail").contains("nats"),
        "no broker internals: {body}"
    );

    // Refusals hold nothing: 2,000 more do not grow the process (after a warm-up, so the
    // allocator's and the connection pool's first growth is not counted).
    // The RSS is the whole test process's, and the other tests of this binary allocate
    // meanwhile: a round can grow by their share. What refusals held would grow every round,
    // so the least growth of three rounds is what counts.
    refuse(&ingest, &keys, 200).await;
    let mut growths = Vec::new();
    for _ in 0..3 {
        let before = rss_kib();
        let started = Instant::now();
        refuse(&ingest, &keys, REFUSALS).await;
        let grown_kib = rss_kib().saturating_sub(before);
        eprintln!(
            "{REFUSALS} refusals in {:?}; RSS grew {grown_kib} KiB",
            started.elapsed()
        );
        growths.push(grown_kib);
    }
    assert!(
        growths.iter().min().is_some_and(|g| *g < MAX_GROWTH_KIB),
        "{REFUSALS} refused writes grew the RSS by {growths:?} KiB in three rounds"
    );

    ingest.nats.restart().await.expect("restart");
    // Generous: the client's reconnect backs off, and the suite runs all at once.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if ingest.post("/api/plugin/heartbeat", heartbeat()).await.0 == 202 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "writes did not recover within 60 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Exactly the two acknowledged heartbeats are in the log: nothing from the 503.
    assert_eq!(ingest.log_messages().await.len(), 2);
}

#[tokio::test]
async fn a_stream_that_would_forget_events_is_refused_at_start() {
    let nats = NatsServer::start().await.expect("nats");
    let log = EventLogConfig {
        stream: "FORGETFUL".into(),
        subject_prefix: "fg".into(),
        ..EventLogConfig::default()
    };
    let client = async_nats::connect(nats.url()).await.expect("connect");
    let mut stream_config = log.stream_config();
    stream_config.max_age = Duration::from_secs(3600);
    jetstream::new(client)
        .create_stream(stream_config)
        .await
        .expect("create");

    let error = ingest::App::build(config(nats.url(), log, "admin"), CancellationToken::new())
        .await
        .err()
        .expect("refused");
    let message = format!("{error:#}");
    assert!(
        message.contains("FORGETFUL") && message.contains("refusing to start"),
        "{message}"
    );
}
