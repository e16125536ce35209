//! Plugin traffic through ingest's HTTP API: simulated game servers posting 100-record chat
//! batches (each awaits its 202, i.e. the durable ack, before the next), and single custom
//! events.

use crate::data::{CHAT_BATCH, ChatBodies, custom_event};
use crate::stats::{Latencies, Measurement};
use rand::SeedableRng;
use rand::rngs::StdRng;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use uuid::Uuid;

/// What a load run did.
pub(crate) struct LoadOutcome {
    /// Records (or requests) accepted.
    pub(crate) accepted: u64,
    /// Latency of each accepted request.
    pub(crate) latencies: Latencies,
    /// Requests that did not get a 202.
    pub(crate) errors: u64,
    /// From the first request to the last answer.
    pub(crate) elapsed: Duration,
}

/// Each key is one simulated server posting chat batches back to back for `duration`.
pub(crate) async fn chat_servers(
    http: &reqwest::Client,
    ingest_url: &str,
    keys: &[String],
    players: Arc<Vec<Uuid>>,
    duration: Duration,
) -> anyhow::Result<LoadOutcome> {
    let bodies = Arc::new(ChatBodies::new(&mut StdRng::seed_from_u64(17), &players)?);
    Ok(chat_bodies(http, ingest_url, keys, bodies, duration).await)
}

/// Like [`chat_servers`], posting `bodies` (made by the caller, e.g. from a player pool of
/// its own).
pub(crate) async fn chat_bodies(
    http: &reqwest::Client,
    ingest_url: &str,
    keys: &[String],
    bodies: Arc<ChatBodies>,
    duration: Duration,
) -> LoadOutcome {
    let url = format!("{ingest_url}/api/plugin/chat");
    let sent = Arc::new(AtomicUsize::new(0));
    run_workers(
        keys,
        duration,
        move |key, http, _rng| {
            let (url, bodies, sent) = (url.clone(), bodies.clone(), sent.clone());
            async move {
                let body = bodies.body(sent.fetch_add(1, Ordering::Relaxed));
                post(&http, &url, &key, body)
                    .await
                    .then_some(CHAT_BATCH as u64)
            }
        },
        http,
    )
    .await
}

/// Chat batches at a steady `records_per_s` in all, spread over `keys` (one simulated server
/// each, a batch every `keys x 100 / records_per_s` seconds), until `stop` fires. A server
/// whose answer comes late skips the ticks it missed rather than bursting to catch up.
pub(crate) async fn paced_chat(
    http: reqwest::Client,
    ingest_url: String,
    keys: Vec<String>,
    bodies: Arc<ChatBodies>,
    records_per_s: f64,
    stop: tokio_util::sync::CancellationToken,
) -> LoadOutcome {
    let url = format!("{ingest_url}/api/plugin/chat");
    let sent = Arc::new(AtomicUsize::new(0));
    let period =
        Duration::from_secs_f64((keys.len().max(1) * CHAT_BATCH) as f64 / records_per_s.max(1.0));
    let started = Instant::now();
    let count = keys.len().max(1);
    let servers: Vec<_> = keys
        .into_iter()
        .enumerate()
        .map(|(i, key)| {
            let (http, url, bodies, sent, stop) = (
                http.clone(),
                url.clone(),
                bodies.clone(),
                sent.clone(),
                stop.clone(),
            );
            tokio::spawn(async move {
                // Servers start spread over one period, not all on the same tick.
                let offset = period.mul_f64(i as f64 / count as f64);
                let mut ticks =
                    tokio::time::interval_at(tokio::time::Instant::now() + offset, period);
                ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
                let (mut accepted, mut errors, mut latencies) = (0u64, 0u64, Latencies::default());
                loop {
                    tokio::select! {
                        _ = stop.cancelled() => break,
                        _ = ticks.tick() => {}
                    }
                    let body = bodies.body(sent.fetch_add(1, Ordering::Relaxed));
                    let at = Instant::now();
                    if post(&http, &url, &key, body).await {
                        accepted += CHAT_BATCH as u64;
                        latencies.push(at.elapsed());
                    } else {
                        errors += 1;
                    }
                }
                (accepted, errors, latencies)
            })
        })
        .collect();
    LoadOutcome::gather(servers, started).await
}

/// Each key is one client posting the bodies `body(n)` (each of `records` records) to `path`
/// back to back for `duration`, `n` counting every request of the run.
pub(crate) async fn batches(
    http: &reqwest::Client,
    url: String,
    keys: &[String],
    body: Arc<dyn Fn(usize) -> Vec<u8> + Send + Sync>,
    records: u64,
    duration: Duration,
) -> LoadOutcome {
    let sent = Arc::new(AtomicUsize::new(0));
    run_workers(
        keys,
        duration,
        move |key, http, _rng| {
            let (url, body, sent) = (url.clone(), body.clone(), sent.clone());
            async move {
                let body = body(sent.fetch_add(1, Ordering::Relaxed));
                post(&http, &url, &key, body).await.then_some(records)
            }
        },
        http,
    )
    .await
}

/// Each key is one client posting single custom events back to back for `duration`.
pub(crate) async fn single_events(
    http: &reqwest::Client,
    ingest_url: &str,
    keys: &[String],
    duration: Duration,
) -> LoadOutcome {
    let url = format!("{ingest_url}/api/v1/plugin/events");
    run_workers(
        keys,
        duration,
        move |key, http, mut rng| {
            let url = url.clone();
            async move {
                let event =
                    custom_event(&mut rng, Uuid::new_v4(), "crate_opened", chrono::Utc::now());
                let body = serde_json::to_vec(&event).ok()?;
                post(&http, &url, &key, body).await.then_some(1)
            }
        },
        http,
    )
    .await
}

/// POSTs `body` with `key`; true on 202.
pub(crate) async fn post(http: &reqwest::Client, url: &str, key: &str, body: Vec<u8>) -> bool {
    match http
        .post(url)
        .bearer_auth(key)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
    {
        Ok(response) => response.status() == reqwest::StatusCode::ACCEPTED,
        Err(_) => false,
    }
}

async fn run_workers<F, Fut>(
    keys: &[String],
    duration: Duration,
    request: F,
    http: &reqwest::Client,
) -> LoadOutcome
where
    F: Fn(String, reqwest::Client, StdRng) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = Option<u64>> + Send + 'static,
{
    let started = Instant::now();
    let deadline = started + duration;
    let workers: Vec<_> = keys
        .iter()
        .enumerate()
        .map(|(i, key)| {
            let (key, http, request) = (key.clone(), http.clone(), request.clone());
            tokio::spawn(async move {
                let mut rng = StdRng::seed_from_u64(i as u64);
                let (mut accepted, mut errors, mut latencies) = (0u64, 0u64, Latencies::default());
                while Instant::now() < deadline {
                    let sent = Instant::now();
                    let seed = StdRng::from_rng(&mut rng);
                    match request(key.clone(), http.clone(), seed).await {
                        Some(units) => {
                            accepted += units;
                            latencies.push(sent.elapsed());
                        }
                        None => {
                            errors += 1;
                            // A refused request (e.g. 429) must not spin.
                            tokio::time::sleep(Duration::from_millis(50)).await;
                        }
                    }
                }
                (accepted, errors, latencies)
            })
        })
        .collect();
    LoadOutcome::gather(workers, started).await
}

/// What one simulated client did: units accepted, requests refused, latencies.
type WorkerOutcome = (u64, u64, Latencies);

impl LoadOutcome {
    /// The sum of the clients' outcomes, timed from `started` to the last one's end.
    async fn gather(
        workers: Vec<tokio::task::JoinHandle<WorkerOutcome>>,
        started: Instant,
    ) -> LoadOutcome {
        let mut outcome = LoadOutcome {
            accepted: 0,
            latencies: Latencies::default(),
            errors: 0,
            elapsed: Duration::ZERO,
        };
        for worker in workers {
            if let Ok((accepted, errors, latencies)) = worker.await {
                outcome.accepted += accepted;
                outcome.errors += errors;
                outcome.latencies.merge(latencies);
            }
        }
        outcome.elapsed = started.elapsed();
        outcome
    }

    /// As a report measurement.
    pub(crate) fn measurement(&self, name: &str, what: &str, unit: &str) -> Measurement {
        Measurement::new(
            name,
            what,
            unit,
            self.accepted,
            self.elapsed,
            Some(&self.latencies),
            self.errors,
        )
    }
}
