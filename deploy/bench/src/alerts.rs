//! The alerts target: from a plugin write to the signed webhook arriving at a local receiver,
//! p99 <= 250 ms at 100 notifications/s. The admin API adds a webhook destination and a
//! `punishment_issued` rule like an operator; the notifier (`projector notify`) runs as a child
//! process; punishments are posted to ingest one per request at a steady rate; an in-process
//! receiver notes when each webhook arrives and checks its signature.

use crate::children::ServiceProcess;
use crate::ingest_load::post;
use crate::run::{Bench, phase};
use crate::serve::Service;
use crate::stats::{Latencies, Measurement};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use futures::StreamExt;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use uuid::Uuid;

/// The measurement's name in the report.
pub(crate) const NAME: &str = "alert_webhook";
/// Requests a minute one plugin key is given (half its quota of 1,000 a minute).
const PER_KEY_PER_MINUTE: usize = 500;
/// How long the notifications still missing at the end may take.
const DRAIN: Duration = Duration::from_secs(30);

/// What the receiver saw: for each punishment number, when it first arrived and whether its
/// signature checked out.
#[derive(Default)]
struct Arrivals {
    secret: String,
    first: HashMap<u64, (Instant, bool)>,
    /// Requests in all, repeats included.
    requests: u64,
}

type Shared = Arc<Mutex<Arrivals>>;

/// Runs the phase; adds [`NAME`] to the report and the notifier's memory.
pub(crate) async fn measure(b: &mut Bench, ingest: &ServiceProcess) -> anyhow::Result<()> {
    let (count, rate) = (b.plan.alert_notifications, b.plan.alert_rate);
    phase(&format!(
        "alerts: plugin write -> signed webhook, {count} notifications at {rate}/s"
    ));
    let arrivals: Shared = Arc::default();
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
    let url = format!("http://{}/hook", listener.local_addr()?);
    let app = axum::Router::new()
        .route("/hook", axum::routing::post(receive))
        .with_state(arrivals.clone());
    let server = tokio::spawn(async move { axum::serve(listener, app).await });

    let account = b.admin.account("bench alerts").await?;
    let per_minute = rate as usize * 60;
    let keys = b
        .admin
        .keys(
            account,
            "plugin",
            per_minute.div_ceil(PER_KEY_PER_MINUTE) + 1,
        )
        .await?;
    let secret = b.admin.alert_webhook(account, &url).await?;
    if let Ok(mut seen) = arrivals.lock() {
        seen.secret = secret;
    }
    let notifier = b.start(Service::Notifier).await?;
    let ingest_url = format!("{}/api/plugin/punishments", ingest.base_url);

    // Warm-up (not measured): until one notification arrives, the notifier has found the end
    // of the log (a first start begins there) and every connection is open.
    let warm_until = Instant::now() + Duration::from_secs(60);
    let (mut n, mut refused) = (1_000_000_000u64, 0);
    while received(&arrivals) == 0 {
        anyhow::ensure!(
            Instant::now() < warm_until,
            "no webhook arrived within 60 s of warm-up ({refused} of {} posts refused); see \
             target/bench/logs/notifier.log",
            n - 1_000_000_000
        );
        if !post(&b.http, &ingest_url, &keys[0], punishment(n)).await {
            refused += 1;
        }
        n += 1;
        let waited = Instant::now() + Duration::from_millis(500);
        while received(&arrivals) == 0 && Instant::now() < waited {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    if let Ok(mut seen) = arrivals.lock() {
        seen.first.clear();
        seen.requests = 0;
    }

    let started = Instant::now();
    let (sent, errors) = post_steadily(b, &ingest_url, &keys, count, rate).await;
    let drain_until = Instant::now() + DRAIN;
    while !all_arrived(&arrivals, &sent) && Instant::now() < drain_until {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let elapsed = started.elapsed();
    let mut latencies = Latencies::default();
    let (mut unverified, mut repeats) = (0u64, 0u64);
    if let Ok(seen) = arrivals.lock() {
        for (n, at) in &sent {
            match seen.first.get(n) {
                Some((arrived, true)) => latencies.push(arrived.duration_since(*at)),
                Some((_, false)) => unverified += 1,
                None => {}
            }
        }
        repeats = seen.requests.saturating_sub(seen.first.len() as u64);
    }
    let missing = (sent.len() - latencies.len()) as u64 - unverified;
    b.report.measurements.push(Measurement::new(
        NAME,
        &format!(
            "time from sending a plugin POST of one punishment to its signed webhook arriving at \
             a local receiver (notifier child process, one webhook destination, one \
             punishment_issued rule), {rate} notifications/s"
        ),
        "notifications",
        latencies.len() as u64,
        elapsed,
        Some(&latencies),
        errors + missing + unverified,
    ));
    b.note(
        NAME,
        format!(
            "{} posted, {} arrived signed correctly, {unverified} with a bad signature, \
             {missing} missing after {}s, {errors} posts refused, {repeats} repeats",
            sent.len(),
            latencies.len(),
            DRAIN.as_secs()
        ),
    );
    b.memory("after the alerts phase", &notifier);
    notifier.stop().await;
    server.abort();
    Ok(())
}

/// Posts `count` punishments, one per request, at `rate`/s; returns when each accepted one was
/// sent, and how many were refused.
async fn post_steadily(
    b: &Bench,
    url: &str,
    keys: &[String],
    count: usize,
    rate: u32,
) -> (Vec<(u64, Instant)>, u64) {
    let mut ticks = tokio::time::interval(Duration::from_secs_f64(1.0 / f64::from(rate.max(1))));
    let mut inflight = futures::stream::FuturesUnordered::new();
    let mut sent = Vec::with_capacity(count);
    let mut errors = 0u64;
    for i in 0..count {
        ticks.tick().await;
        let (http, url, key) = (b.http.clone(), url.to_owned(), keys[i % keys.len()].clone());
        let n = i as u64;
        inflight.push(async move {
            let at = Instant::now();
            (n, at, post(&http, &url, &key, punishment(n)).await)
        });
        while let Some(Some((n, at, ok))) = futures::FutureExt::now_or_never(inflight.next()) {
            if ok { sent.push((n, at)) } else { errors += 1 }
        }
    }
    while let Some((n, at, ok)) = inflight.next().await {
        if ok { sent.push((n, at)) } else { errors += 1 }
    }
    (sent, errors)
}

fn all_arrived(arrivals: &Shared, sent: &[(u64, Instant)]) -> bool {
    arrivals
        .lock()
        .is_ok_and(|seen| sent.iter().all(|(n, _)| seen.first.contains_key(n)))
}

fn received(arrivals: &Shared) -> usize {
    arrivals.lock().map(|seen| seen.first.len()).unwrap_or(0)
}

/// Punishment number `n`: its reason carries the number back in the webhook.
fn punishment(n: u64) -> Vec<u8> {
    json!({"server_id": Uuid::now_v7(), "player_uuid": Uuid::new_v4(), "player_name": "Bencher",
           "type": "warning", "reason": format!("bench {n}"), "staff_name": "Bench"})
    .to_string()
    .into_bytes()
}

/// The receiver: notes the arrival first, then checks the Standard Webhooks signature
/// (shared::alerts::signing, which the tests check against the reference implementation).
async fn receive(State(arrivals): State<Shared>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let arrived = Instant::now();
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    };
    let n = serde_json::from_slice::<Value>(&body).ok().and_then(|v| {
        v["data"]["reason"]
            .as_str()
            .and_then(|r| r.strip_prefix("bench "))
            .and_then(|n| n.parse::<u64>().ok())
    });
    let Ok(mut seen) = arrivals.lock() else {
        return StatusCode::INTERNAL_SERVER_ERROR;
    };
    let verified = header("webhook-timestamp")
        .parse::<i64>()
        .ok()
        .and_then(|timestamp| {
            shared::alerts::signing::sign(&seen.secret, header("webhook-id"), timestamp, &body).ok()
        })
        .is_some_and(|expected| {
            header("webhook-signature")
                .split(' ')
                .any(|s| s == expected)
        });
    seen.requests += 1;
    if let Some(n) = n {
        seen.first.entry(n).or_insert((arrived, verified));
    }
    StatusCode::OK
}
