//! Rate limits that mean what they say: never more than N requests in any rolling 60-second
//! window, and a client may spend its whole quota at once (contract §4).
//!
//! The exact way to hold that is a sliding log: the times of the requests accepted in the
//! last 60 s. A request is admitted while the log holds fewer than N; a refused one is told
//! the true wait (until the oldest entry leaves the window), rounded up to whole seconds, and
//! is not recorded. The log lives in a shared store (a JetStream KV bucket) so the limit holds
//! across replicas; [`admit`] updates it with optimistic concurrency (compare-and-set on the
//! entry's revision). This module is pure logic over the [`WindowStore`] trait; the services
//! implement the store.

use std::future::Future;

/// The window every quota is counted over, in milliseconds.
pub const WINDOW_MS: u64 = 60_000;
/// Compare-and-set attempts before a request counts as refused under contention.
const MAX_ATTEMPTS: usize = 16;

/// Who a quota applies to, and its size per rolling minute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quota {
    /// Plugin endpoints: 1,000 / minute per plugin key.
    Plugin,
    /// Dashboard and events reads: 60 / minute per dashboard key.
    Dashboard,
    /// Public endpoints: 30 / minute per client IP.
    Public,
}

impl Quota {
    /// Requests allowed in any rolling 60 s.
    pub fn limit(self) -> u32 {
        match self {
            Quota::Plugin => 1000,
            Quota::Dashboard => 60,
            Quota::Public => 30,
        }
    }

    /// The store key of one client under this quota (KV-safe characters only).
    pub fn store_key(self, client: &str) -> String {
        let scope = match self {
            Quota::Plugin => "plugin",
            Quota::Dashboard => "dashboard",
            Quota::Public => "public",
        };
        let client: String = client
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        format!("{scope}.{client}")
    }
}

/// The outcome of one request, with what the `RateLimit-*` headers say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// Whether the request may proceed.
    pub allowed: bool,
    /// `RateLimit-Limit`.
    pub limit: u32,
    /// `RateLimit-Remaining`: requests still allowed right now.
    pub remaining: u32,
    /// `RateLimit-Reset`: seconds until the oldest counted request leaves the window.
    pub reset_secs: u64,
    /// `Retry-After` for a refused request: the true wait, rounded up, at least 1.
    pub retry_after_secs: Option<u64>,
}

impl Decision {
    /// Writes `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` (and `Retry-After`
    /// when refused) into `headers`.
    pub fn apply_headers(&self, headers: &mut axum::http::HeaderMap) {
        use axum::http::HeaderValue;
        headers.insert("ratelimit-limit", HeaderValue::from(self.limit));
        headers.insert("ratelimit-remaining", HeaderValue::from(self.remaining));
        headers.insert("ratelimit-reset", HeaderValue::from(self.reset_secs));
        if let Some(wait) = self.retry_after_secs {
            headers.insert(axum::http::header::RETRY_AFTER, HeaderValue::from(wait));
        }
    }

    /// The 429 response for a refused request.
    pub fn refusal(&self) -> axum::response::Response {
        use axum::response::IntoResponse;
        let wait = self.retry_after_secs.unwrap_or(1);
        let mut response = crate::problem::Problem::new(
            axum::http::StatusCode::TOO_MANY_REQUESTS,
            "rate_limited",
            "Too many requests",
            format!(
                "this client may send {} requests in any 60 seconds; retry after {wait} s",
                self.limit
            ),
        )
        .into_response();
        self.apply_headers(response.headers_mut());
        response
    }
}

/// The current time in Unix milliseconds.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The accepted requests of one client in the current window, oldest first (Unix ms).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WindowLog(Vec<u64>);

fn ceil_secs(ms: u64) -> u64 {
    ms.div_ceil(1000)
}

impl WindowLog {
    /// Reads the stored form (little-endian u64s); garbage reads as empty.
    pub fn decode(bytes: &[u8]) -> WindowLog {
        WindowLog(
            bytes
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
                .collect(),
        )
    }

    /// The stored form.
    pub fn encode(&self) -> Vec<u8> {
        self.0.iter().flat_map(|t| t.to_le_bytes()).collect()
    }

    /// True when no entry is left in the window at `now_ms`.
    pub fn is_expired(&self, now_ms: u64) -> bool {
        self.0.last().is_none_or(|&t| t + WINDOW_MS <= now_ms)
    }

    /// Decides a request at `now_ms` against `limit`, recording it when admitted.
    pub fn admit(&mut self, limit: u32, now_ms: u64) -> Decision {
        // An entry at t occupies [t, t + window).
        self.0.retain(|&t| t + WINDOW_MS > now_ms);
        let limit_usize = limit as usize;
        if self.0.len() < limit_usize {
            self.0.push(now_ms);
            let oldest = self.0.first().copied().unwrap_or(now_ms);
            return Decision {
                allowed: true,
                limit,
                remaining: (limit_usize - self.0.len()) as u32,
                reset_secs: ceil_secs(oldest + WINDOW_MS - now_ms),
                retry_after_secs: None,
            };
        }
        // Full: a slot frees when the entry that leaves the window first leaves it.
        let index = self.0.len() - limit_usize;
        let wait_ms = self.0[index] + WINDOW_MS - now_ms;
        let wait = ceil_secs(wait_ms).max(1);
        Decision {
            allowed: false,
            limit,
            remaining: 0,
            reset_secs: wait,
            retry_after_secs: Some(wait),
        }
    }
}

/// Where the logs live, shared by every replica.
pub trait WindowStore: Sync {
    /// A store failure (unreachable, timed out).
    type Error: std::fmt::Display + Send;

    /// The stored log and its revision; `None` when the client has none.
    fn load(
        &self,
        key: &str,
    ) -> impl Future<Output = Result<Option<(Vec<u8>, u64)>, Self::Error>> + Send;

    /// Stores a first log; `Ok(false)` when another replica created it first.
    fn create(
        &self,
        key: &str,
        value: Vec<u8>,
    ) -> impl Future<Output = Result<bool, Self::Error>> + Send;

    /// Replaces the log if it is still at `revision`; `Ok(false)` on a conflict.
    fn update(
        &self,
        key: &str,
        value: Vec<u8>,
        revision: u64,
    ) -> impl Future<Output = Result<bool, Self::Error>> + Send;
}

/// Decides one request of `client` under `quota`, recording it in `store` when admitted.
pub async fn admit<S: WindowStore>(
    store: &S,
    quota: Quota,
    client: &str,
    now_ms: impl Fn() -> u64,
) -> Result<Decision, S::Error> {
    let key = quota.store_key(client);
    for _ in 0..MAX_ATTEMPTS {
        let stored = store.load(&key).await?;
        let mut log = stored
            .as_ref()
            .map(|(bytes, _)| WindowLog::decode(bytes))
            .unwrap_or_default();
        let decision = log.admit(quota.limit(), now_ms());
        if !decision.allowed {
            // Refused requests do not count: nothing to write.
            return Ok(decision);
        }
        let written = match stored {
            Some((_, revision)) => store.update(&key, log.encode(), revision).await?,
            None => store.create(&key, log.encode()).await?,
        };
        if written {
            return Ok(decision);
        }
    }
    // Persistent contention on one client's log: it is sending faster than we can count.
    Ok(Decision {
        allowed: false,
        limit: quota.limit(),
        remaining: 0,
        reset_secs: 1,
        retry_after_secs: Some(1),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::sync::Mutex;

    #[test]
    fn the_whole_quota_may_be_spent_at_once_then_the_true_wait_is_given() {
        let mut log = WindowLog::default();
        for i in 0..60 {
            let d = log.admit(60, 1_000_000 + i);
            assert!(d.allowed);
            assert_eq!(d.remaining, 59 - i as u32);
        }
        let refused = log.admit(60, 1_000_500);
        assert!(!refused.allowed);
        // The first request (at 1_000_000) leaves the window at 1_060_000: 59.5 s away.
        assert_eq!(refused.retry_after_secs, Some(60));
        // A retry after the advertised wait succeeds.
        assert!(log.admit(60, 1_000_500 + 60_000).allowed);
    }

    #[test]
    fn never_more_than_n_in_any_rolling_window() {
        let mut log = WindowLog::default();
        let mut accepted = Vec::new();
        // A client hammering every 100 ms for 5 minutes.
        for step in 0..3000u64 {
            let now = step * 100;
            if log.admit(30, now).allowed {
                accepted.push(now);
            }
        }
        for (i, &start) in accepted.iter().enumerate() {
            let in_window = accepted[i..]
                .iter()
                .take_while(|&&t| t < start + WINDOW_MS)
                .count();
            assert!(
                in_window <= 30,
                "{in_window} requests in the window starting at {start}"
            );
        }
        // And the quota is actually usable: 30 per minute over 5 minutes.
        assert_eq!(accepted.len(), 150);
    }

    #[test]
    fn retry_after_is_rounded_up_and_never_zero() {
        let mut log = WindowLog::default();
        assert!(log.admit(1, 10_000).allowed);
        assert_eq!(log.admit(1, 69_999).retry_after_secs, Some(1));
        assert_eq!(log.admit(1, 10_001).retry_after_secs, Some(60));
        assert_eq!(log.admit(1, 68_800).retry_after_secs, Some(2));
    }

    #[test]
    fn the_log_round_trips() {
        let mut log = WindowLog::default();
        log.admit(5, 7);
        log.admit(5, 9);
        assert_eq!(WindowLog::decode(&log.encode()), log);
        assert_eq!(WindowLog::decode(b"junk"), WindowLog::default());
    }

    #[test]
    fn store_keys_are_kv_safe() {
        assert_eq!(Quota::Public.store_key("2001:db8::1"), "public.2001_db8__1");
        assert_eq!(Quota::Plugin.store_key("0190-ab"), "plugin.0190-ab");
    }

    /// An in-memory store with compare-and-set, to check the retry loop.
    #[derive(Default)]
    struct MemoryStore(Mutex<HashMap<String, (Vec<u8>, u64)>>);

    impl WindowStore for MemoryStore {
        type Error = String;
        async fn load(&self, key: &str) -> Result<Option<(Vec<u8>, u64)>, String> {
            Ok(self.0.lock().map_err(|e| e.to_string())?.get(key).cloned())
        }
        async fn create(&self, key: &str, value: Vec<u8>) -> Result<bool, String> {
            let mut map = self.0.lock().map_err(|e| e.to_string())?;
            if map.contains_key(key) {
                return Ok(false);
            }
            map.insert(key.to_owned(), (value, 1));
            Ok(true)
        }
        async fn update(&self, key: &str, value: Vec<u8>, revision: u64) -> Result<bool, String> {
            let mut map = self.0.lock().map_err(|e| e.to_string())?;
            match map.get(key) {
                Some((_, current)) if *current == revision => {
                    map.insert(key.to_owned(), (value, revision + 1));
                    Ok(true)
                }
                _ => Ok(false),
            }
        }
    }

    #[tokio::test]
    async fn admit_counts_in_the_store_and_refusals_write_nothing() {
        let store = MemoryStore::default();
        for _ in 0..30 {
            assert!(
                admit(&store, Quota::Public, "1.2.3.4", || 5_000)
                    .await
                    .expect("store")
                    .allowed
            );
        }
        let before = store.0.lock().expect("lock").get("public.1_2_3_4").cloned();
        let refused = admit(&store, Quota::Public, "1.2.3.4", || 5_000)
            .await
            .expect("store");
        assert!(!refused.allowed);
        assert_eq!(
            store.0.lock().expect("lock").get("public.1_2_3_4").cloned(),
            before
        );
        assert!(
            admit(&store, Quota::Public, "5.6.7.8", || 5_000)
                .await
                .expect("store")
                .allowed
        );
    }
}
