//! A series of GETs timed one at a time (as a staff member's clicks arrive), keys used round
//! robin so that no key's quota throttles the series.

use crate::stats::{Latencies, Measurement};
use std::time::Instant;

/// Requests one dashboard key may spend in a series (the dashboard quota is 60 a minute).
pub(crate) const PER_KEY: usize = 50;

/// Untimed requests before each timed series, twice the service's pooled connections: the pool
/// hands out its connections in turn, so each one has run the series' statements (plans and
/// catalog caches warm) before the timing starts, as in a service that has been running.
pub(crate) const WARM_UP: usize = 2 * query_api::startup::POOL_CONNECTIONS as usize;

/// Keys needed for `requests` timed requests plus the warm-up.
pub(crate) fn keys_for(requests: usize) -> usize {
    (requests + WARM_UP) / PER_KEY + 2
}

/// Sends `count` GETs built by `url` (after a warm-up) and returns their measurement; a
/// non-2xx answer counts as an error.
pub(crate) async fn time_gets(
    http: &reqwest::Client,
    keys: &[String],
    (name, what): (&str, &str),
    count: usize,
    mut url: impl FnMut() -> String,
) -> Measurement {
    let mut turn = 0usize;
    let mut key = || {
        turn += 1;
        keys[turn % keys.len().max(1)].clone()
    };
    for _ in 0..WARM_UP {
        let _ = http.get(url()).bearer_auth(key()).send().await;
    }
    let (mut latencies, mut errors, started) = (Latencies::default(), 0u64, Instant::now());
    for _ in 0..count {
        let request = http.get(url()).bearer_auth(key());
        let sent = Instant::now();
        let ok = match request.send().await {
            Ok(r) if r.status().is_success() => r.bytes().await.is_ok(),
            _ => false,
        };
        if ok {
            latencies.push(sent.elapsed())
        } else {
            errors += 1
        }
    }
    Measurement::new(
        name,
        what,
        "requests",
        latencies.len() as u64,
        started.elapsed(),
        Some(&latencies),
        errors,
    )
}
