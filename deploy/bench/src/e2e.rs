//! The live stream: plugin POST -> event delivered to every SSE subscriber, at a steady rate;
//! and query-api holding many open streams (for its memory).

use crate::ingest_load::post;
use crate::stats::{Latencies, Measurement};
use futures::StreamExt;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

/// Stream opens refused with 429 (and retried), over the whole run.
pub(crate) static REFUSED_OPENS: AtomicUsize = AtomicUsize::new(0);

/// The event name the end-to-end phase posts and its streams filter on.
const E2E_EVENT: &str = "bench_e2e";

/// Open SSE subscribers, recording when each event reaches each of them.
pub(crate) struct Subscribers {
    sent: Arc<Mutex<HashMap<Uuid, Instant>>>,
    latencies: Arc<Mutex<Latencies>>,
    connected: Arc<AtomicUsize>,
    stop: CancellationToken,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Subscribers {
    /// Opens `count` streams on `query_url`, spread evenly over `keys`.
    pub(crate) fn open(
        http: &reqwest::Client,
        query_url: &str,
        keys: &[String],
        count: usize,
    ) -> Subscribers {
        let subscribers = Subscribers {
            sent: Arc::default(),
            latencies: Arc::default(),
            connected: Arc::default(),
            stop: CancellationToken::new(),
            tasks: Vec::new(),
        };
        let url = format!("{query_url}/api/v1/events/stream?name={E2E_EVENT}");
        let tasks = (0..count)
            .map(|i| {
                let key = keys[i % keys.len().max(1)].clone();
                let (http, url) = (http.clone(), url.clone());
                let (sent, latencies) = (subscribers.sent.clone(), subscribers.latencies.clone());
                let (connected, stop) = (subscribers.connected.clone(), subscribers.stop.clone());
                tokio::spawn(async move {
                    tokio::select! {
                        () = stop.cancelled() => {}
                        () = follow(http, url, key, sent, latencies, connected) => {}
                    }
                })
            })
            .collect();
        Subscribers {
            tasks,
            ..subscribers
        }
    }

    /// Waits (at most `limit`) until every stream has its response headers; returns how many do.
    pub(crate) async fn wait_connected(&self, limit: Duration) -> usize {
        let deadline = Instant::now() + limit;
        while self.connected.load(Ordering::Relaxed) < self.tasks.len() && Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.connected.load(Ordering::Relaxed)
    }

    /// Posts one event per tick at `rate`/s for `duration` with `keys` (round robin).
    pub(crate) async fn post_steadily(
        &self,
        http: &reqwest::Client,
        ingest_url: &str,
        keys: &[String],
        rate: u32,
        duration: Duration,
    ) -> (u64, u64) {
        let url = format!("{ingest_url}/api/v1/plugin/events");
        let mut ticks =
            tokio::time::interval(Duration::from_secs_f64(1.0 / f64::from(rate.max(1))));
        let deadline = Instant::now() + duration;
        let (mut posted, mut errors) = (0u64, 0u64);
        let mut i = 0;
        let mut inflight = futures::stream::FuturesUnordered::new();
        while Instant::now() < deadline {
            ticks.tick().await;
            let id = Uuid::now_v7();
            let body = serde_json::json!({"id": id, "player_uuid": Uuid::new_v4(), "name": E2E_EVENT, "properties": {"n": i}});
            if let Ok(mut sent) = self.sent.lock() {
                sent.insert(id, Instant::now());
            }
            let (http, url, key) = (
                http.clone(),
                url.clone(),
                keys[i % keys.len().max(1)].clone(),
            );
            inflight
                .push(async move { post(&http, &url, &key, body.to_string().into_bytes()).await });
            i += 1;
            while let Some(Some(ok)) = futures::FutureExt::now_or_never(inflight.next()) {
                if ok { posted += 1 } else { errors += 1 }
            }
        }
        while let Some(ok) = inflight.next().await {
            if ok { posted += 1 } else { errors += 1 }
        }
        (posted, errors)
    }

    /// Closes every stream; returns the delivery latencies seen.
    pub(crate) async fn close(self) -> Latencies {
        self.stop.cancel();
        for task in self.tasks {
            let _ = task.await;
        }
        self.latencies.lock().map(|l| l.clone()).unwrap_or_default()
    }
}

async fn follow(
    http: reqwest::Client,
    url: String,
    key: String,
    sent: Arc<Mutex<HashMap<Uuid, Instant>>>,
    latencies: Arc<Mutex<Latencies>>,
    connected: Arc<AtomicUsize>,
) {
    // Opening many streams with one key at once makes the quota's compare-and-set contend, and
    // a request that loses too often is refused (429); such an open is retried after a pause.
    let mut response = None;
    for attempt in 0..40u64 {
        match http.get(&url).bearer_auth(&key).send().await {
            Ok(r) if r.status().is_success() => {
                response = Some(r);
                break;
            }
            Ok(r) if r.status() == reqwest::StatusCode::TOO_MANY_REQUESTS => {
                REFUSED_OPENS.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(50 + (attempt * 37) % 200)).await;
            }
            _ => return,
        }
    }
    let Some(response) = response else { return };
    connected.fetch_add(1, Ordering::Relaxed);
    let mut body = response.bytes_stream();
    let mut buffer = String::new();
    while let Some(Ok(bytes)) = body.next().await {
        let arrived = Instant::now();
        buffer.push_str(&String::from_utf8_lossy(&bytes));
        while let Some(end) = buffer.find('\n') {
            let line: String = buffer.drain(..=end).collect();
            let Some(data) = line.strip_prefix("data:") else {
                continue;
            };
            let id = serde_json::from_str::<serde_json::Value>(data.trim())
                .ok()
                .and_then(|v| {
                    v.get("id")
                        .and_then(|id| id.as_str())
                        .and_then(|id| id.parse::<Uuid>().ok())
                });
            let at = id.and_then(|id| sent.lock().ok().and_then(|s| s.get(&id).copied()));
            if let (Some(at), Ok(mut latencies)) = (at, latencies.lock()) {
                latencies.push(arrived.duration_since(at));
            }
        }
    }
}

/// POST -> delivered on every one of `subscribers` streams, at `rate`/s.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn post_to_stream(
    http: &reqwest::Client,
    query_url: &str,
    ingest_url: &str,
    dashboard_keys: &[String],
    plugin_keys: &[String],
    subscribers: usize,
    rate: u32,
    duration: Duration,
) -> Measurement {
    let streams = Subscribers::open(http, query_url, dashboard_keys, subscribers);
    let open = streams.wait_connected(Duration::from_secs(20)).await;
    let started = Instant::now();
    let (posted, errors) = streams
        .post_steadily(http, ingest_url, plugin_keys, rate, duration)
        .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let latencies = streams.close().await;
    let expected = posted * open as u64;
    let missing = expected.saturating_sub(latencies.len() as u64);
    Measurement::new(
        "post_to_stream",
        &format!(
            "time from sending a plugin POST to the event arriving on each of {open} open SSE streams, {rate} events/s"
        ),
        "deliveries",
        latencies.len() as u64,
        started.elapsed(),
        Some(&latencies),
        errors + missing,
    )
}
