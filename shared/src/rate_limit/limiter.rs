//! The limiter the services share, over the rate-limit bucket in JetStream KV.
//!
//! Ingest (plugin quota) and query-api (dashboard and public quotas) decide requests against
//! the same bucket. The bucket handle belongs to the service; this code only calls it. When
//! the bucket cannot answer in time (NATS down or slow), each replica falls back to an exact
//! window of its own: requests keep flowing, and the limit then holds per replica instead of
//! across them. The fallback is counted in `rate_limit_fallback_total`.
//!
//! A failed or slow bucket opens a breaker for [`BREAKER_OPEN`]: meanwhile every request is
//! counted locally at once, so an outage costs no request more than one bucket timeout (a 503
//! for a write stays fast), and after it a single request probes the bucket again.

use super::{Decision, Quota, WindowLog, WindowStore, admit, now_ms};
use async_nats::jetstream::kv;
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long one call to the shared bucket may take before it counts as failed.
const STORE_TIMEOUT: Duration = Duration::from_millis(250);

/// How long the bucket is left alone after it failed.
const BREAKER_OPEN: Duration = Duration::from_secs(1);

/// Decides requests against the shared windows, with a local fallback.
pub struct Limiter {
    store: KvWindows,
    fallback: Mutex<HashMap<String, WindowLog>>,
    /// Until when the bucket is skipped after a failure (`None`: closed, use the bucket).
    breaker: Mutex<Option<Instant>>,
    /// One request at a time probes a bucket whose breaker just expired.
    probing: AtomicBool,
}

impl std::fmt::Debug for Limiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Limiter").finish_non_exhaustive()
    }
}

impl Limiter {
    /// A limiter over the rate-limit bucket.
    pub fn new(bucket: kv::Store) -> Self {
        Self {
            store: KvWindows(bucket),
            fallback: Mutex::new(HashMap::new()),
            breaker: Mutex::new(None),
            probing: AtomicBool::new(false),
        }
    }

    /// Decides one request of `client` under `quota`.
    pub async fn check(&self, quota: Quota, client: &str) -> Decision {
        let decision = match self.shared_decision(quota, client).await {
            Some(decision) => decision,
            None => self.local(quota, client),
        };
        if !decision.allowed {
            metrics::counter!("rate_limit_rejections_total", "quota" => format!("{quota:?}"))
                .increment(1);
        }
        decision
    }

    /// The bucket's decision, or `None` when the breaker is open or the bucket fails.
    async fn shared_decision(&self, quota: Quota, client: &str) -> Option<Decision> {
        let open_until = *self.breaker.lock().unwrap_or_else(|p| p.into_inner());
        let probe = match open_until {
            Some(until) if Instant::now() < until => return None,
            Some(_) => {
                // Half open: one request probes, the others keep counting locally.
                if self.probing.swap(true, Ordering::AcqRel) {
                    return None;
                }
                true
            }
            None => false,
        };
        // The timeout is per store call (see KvWindows): contention retries are not failures.
        let outcome = admit(&self.store, quota, client, now_ms).await;
        if probe {
            self.probing.store(false, Ordering::Release);
        }
        let mut breaker = self.breaker.lock().unwrap_or_else(|p| p.into_inner());
        match outcome {
            Ok(decision) => {
                *breaker = None;
                Some(decision)
            }
            Err(error) => {
                tracing::warn!(%error, "rate-limit bucket failed; counting locally for a while");
                *breaker = Some(Instant::now() + BREAKER_OPEN);
                None
            }
        }
    }

    fn local(&self, quota: Quota, client: &str) -> Decision {
        metrics::counter!("rate_limit_fallback_total").increment(1);
        let mut windows = self.fallback.lock().unwrap_or_else(|p| p.into_inner());
        let now = now_ms();
        if windows.len() > 100_000 {
            windows.retain(|_, log| !log.is_expired(now));
        }
        windows
            .entry(quota.store_key(client))
            .or_default()
            .admit(quota.limit(), now)
    }
}

/// The rate-limit bucket as a [`WindowStore`].
struct KvWindows(kv::Store);

/// Bounds one bucket call; a timeout is a store failure.
async fn bounded<T, E: std::fmt::Display>(
    call: impl std::future::Future<Output = Result<T, E>>,
) -> Result<Result<T, E>, String> {
    tokio::time::timeout(STORE_TIMEOUT, call)
        .await
        .map_err(|_| "the rate-limit bucket timed out".to_owned())
}

impl WindowStore for KvWindows {
    type Error = String;

    async fn load(&self, key: &str) -> Result<Option<(Vec<u8>, u64)>, String> {
        match bounded(self.0.entry(key))
            .await?
            .map_err(|e| e.to_string())?
        {
            Some(entry) if entry.operation == kv::Operation::Put => {
                Ok(Some((entry.value.to_vec(), entry.revision)))
            }
            _ => Ok(None),
        }
    }

    async fn create(&self, key: &str, value: Vec<u8>) -> Result<bool, String> {
        match bounded(self.0.create(key, value.into())).await? {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == kv::CreateErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(e.to_string()),
        }
    }

    async fn update(&self, key: &str, value: Vec<u8>, revision: u64) -> Result<bool, String> {
        match bounded(self.0.update(key, value.into(), revision)).await? {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == kv::UpdateErrorKind::WrongLastRevision => Ok(false),
            Err(e) => Err(e.to_string()),
        }
    }
}
