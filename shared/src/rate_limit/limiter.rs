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
//!
//! Concurrent requests of one client on one replica do not race each other for the log's
//! revision: they queue, and one writer per client decides everything queued in one
//! compare-and-set (group commit), so only the replicas contend with each other and a burst of
//! the whole quota costs a few writes, not one per request. The writer retries a conflict
//! until [`DECISION_TIMEOUT`]; a batch still undecided then is counted in the replica's own
//! window (like a bucket that does not answer) and in `rate_limit_contention_fallback_total`,
//! never refused for want of an answer.

use super::{Decision, Quota, WindowLog, WindowStore, admit_batch, now_ms};
use async_nats::jetstream::kv;
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// How long one call to the shared bucket may take before it counts as failed.
const STORE_TIMEOUT: Duration = Duration::from_millis(250);

/// How long the bucket is left alone after it failed.
const BREAKER_OPEN: Duration = Duration::from_secs(1);

/// How long a batch may keep retrying a log other replicas keep changing, before its
/// requests are counted locally.
const DECISION_TIMEOUT: Duration = Duration::from_secs(2);

/// A queued request's answer: `None` tells it to count locally.
type Answer = oneshot::Sender<Option<Decision>>;

/// Decides requests against the shared windows, with a local fallback.
pub struct Limiter {
    inner: Arc<Inner>,
}

struct Inner {
    store: KvWindows,
    fallback: Mutex<HashMap<String, WindowLog>>,
    /// Until when the bucket is skipped after a failure (`None`: closed, use the bucket).
    breaker: Mutex<Option<Instant>>,
    /// One request at a time probes a bucket whose breaker just expired.
    probing: AtomicBool,
    /// The requests waiting for each store key's writer; a key is present while its writer
    /// runs.
    queues: Mutex<HashMap<String, Vec<Answer>>>,
}

impl std::fmt::Debug for Limiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Limiter").finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

impl Limiter {
    /// A limiter over the rate-limit bucket.
    pub fn new(bucket: kv::Store) -> Self {
        Self {
            inner: Arc::new(Inner {
                store: KvWindows(bucket),
                fallback: Mutex::new(HashMap::new()),
                breaker: Mutex::new(None),
                probing: AtomicBool::new(false),
                queues: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// Decides one request of `client` under `quota`.
    pub async fn check(&self, quota: Quota, client: &str) -> Decision {
        let shared = match self.inner.bucket_route() {
            Some(probe) => {
                let decision = Arc::clone(&self.inner).queued(quota, client).await;
                if probe {
                    self.inner.probing.store(false, Ordering::Release);
                }
                decision
            }
            None => None,
        };
        let decision = match shared {
            Some(decision) => decision,
            None => self.inner.local(quota, client),
        };
        if !decision.allowed {
            metrics::counter!("rate_limit_rejections_total", "quota" => format!("{quota:?}"))
                .increment(1);
        }
        decision
    }
}

impl Inner {
    /// `Some(probe)` when a request goes to the bucket (`probe`: it tests a bucket whose
    /// breaker just expired), `None` while the breaker is open.
    fn bucket_route(&self) -> Option<bool> {
        let open_until = *lock(&self.breaker);
        match open_until {
            Some(until) if Instant::now() < until => None,
            // Half open: one request probes, the others keep counting locally.
            Some(_) => (!self.probing.swap(true, Ordering::AcqRel)).then_some(true),
            None => Some(false),
        }
    }

    /// Queues the request for its key's writer (starting one if none runs) and waits for the
    /// bucket's decision; `None` when the bucket gave none.
    async fn queued(self: Arc<Self>, quota: Quota, client: &str) -> Option<Decision> {
        let key = quota.store_key(client);
        let (answer, decision) = oneshot::channel();
        let start_writer = match lock(&self.queues).entry(key.clone()) {
            Entry::Occupied(mut waiting) => {
                waiting.get_mut().push(answer);
                false
            }
            Entry::Vacant(slot) => {
                slot.insert(vec![answer]);
                true
            }
        };
        if start_writer {
            // A task of its own: a request that goes away (its client hung up) must not take
            // the writer of everyone queued behind it with it.
            let writer = Arc::clone(&self);
            let client = client.to_owned();
            tokio::spawn(async move { writer.write_queue(quota, key, client).await });
        }
        // A writer that died (dropped its answers) leaves the request to the local window.
        decision.await.ok().flatten()
    }

    /// Decides everything queued for `key`, batch after batch, until the queue is empty.
    async fn write_queue(&self, quota: Quota, key: String, client: String) {
        let mut release = Release {
            queues: &self.queues,
            key: &key,
            done: false,
        };
        loop {
            let batch = {
                let mut queues = lock(&self.queues);
                let waiting = queues.get_mut(&key).map(std::mem::take).unwrap_or_default();
                if waiting.is_empty() {
                    queues.remove(&key);
                    release.done = true;
                    return;
                }
                waiting
            };
            let give_up_at = tokio::time::Instant::now() + DECISION_TIMEOUT;
            let outcome =
                admit_batch(&self.store, quota, &client, batch.len(), now_ms, give_up_at).await;
            let decisions: Vec<Option<Decision>> = match outcome {
                Ok(Some(decisions)) => {
                    *lock(&self.breaker) = None;
                    decisions.into_iter().map(Some).collect()
                }
                Ok(None) => {
                    tracing::warn!(
                        ?quota,
                        requests = batch.len(),
                        "rate-limit log still contended after {DECISION_TIMEOUT:?}; counting \
                         these requests in this replica's window"
                    );
                    metrics::counter!("rate_limit_contention_fallback_total")
                        .increment(batch.len() as u64);
                    vec![None; batch.len()]
                }
                Err(error) => {
                    tracing::warn!(%error, "rate-limit bucket failed; counting locally for a while");
                    *lock(&self.breaker) = Some(Instant::now() + BREAKER_OPEN);
                    vec![None; batch.len()]
                }
            };
            for (answer, decision) in batch.into_iter().zip(decisions) {
                // The request may have gone away meanwhile; its slot was still counted.
                let _ = answer.send(decision);
            }
        }
    }

    fn local(&self, quota: Quota, client: &str) -> Decision {
        metrics::counter!("rate_limit_fallback_total").increment(1);
        let mut windows = lock(&self.fallback);
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

/// Removes a writer's queue if the writer ends without emptying it (cancelled at shutdown,
/// or a panic): the requests left in it then count locally instead of waiting forever.
struct Release<'a> {
    queues: &'a Mutex<HashMap<String, Vec<Answer>>>,
    key: &'a str,
    done: bool,
}

impl Drop for Release<'_> {
    fn drop(&mut self) {
        if !self.done {
            lock(self.queues).remove(self.key);
        }
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
