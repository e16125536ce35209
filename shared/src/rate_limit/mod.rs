//! Rate limits that mean what they say: never more than N requests in any rolling 60-second
//! window, and a client may spend its whole quota at once (contract §4).
//!
//! The exact way to hold that is a sliding log: the times of the requests accepted in the
//! last 60 s. A request is admitted while the log holds fewer than N; a refused one is told
//! the true wait (until the oldest entry leaves the window), rounded up to whole seconds, and
//! is not recorded. The log lives in a shared store (a JetStream KV bucket) so the limit holds
//! across replicas; [`admit_batch`] updates it with optimistic concurrency (compare-and-set on
//! the entry's revision), deciding every request a replica holds for one client in one write.
//! The rules ([`WindowLog`], [`admit_batch`]) are written over the [`WindowStore`] trait;
//! [`Limiter`] implements it here over the bucket a service opens and hands in (each call
//! bounded by a timeout, with a per-replica fallback, and one writer per client per replica),
//! and the unit tests over memory.

use std::future::Future;

/// The window every quota is counted over, in milliseconds.
pub const WINDOW_MS: u64 = 60_000;
/// The longest pause between two compare-and-set attempts on one log, in microseconds.
const MAX_BACKOFF_MICROS: u64 = 4_000;

/// Who a quota applies to, and its size per rolling minute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quota {
    /// Plugin endpoints: 1,000 / minute per plugin key.
    Plugin,
    /// Dashboard and events reads: 60 / minute per dashboard key.
    Dashboard,
    /// Public endpoints: 30 / minute per client IP.
    Public,
    /// Dashboard sign-in attempts: 10 / minute per login (whether or not it exists).
    SignInLogin,
    /// Dashboard sign-in attempts: 30 / minute per client IP.
    SignInIp,
    /// Appeals sent from the public appeal form: 5 / minute per client IP.
    Appeal,
}

impl Quota {
    /// Requests allowed in any rolling 60 s.
    pub fn limit(self) -> u32 {
        match self {
            Quota::Plugin => 1000,
            Quota::Dashboard => 60,
            Quota::Public => 30,
            Quota::SignInLogin => 10,
            Quota::SignInIp => 30,
            Quota::Appeal => 5,
        }
    }

    /// The store key of one client under this quota (KV-safe characters only).
    pub fn store_key(self, client: &str) -> String {
        let scope = match self {
            Quota::Plugin => "plugin",
            Quota::Dashboard => "dashboard",
            Quota::Public => "public",
            Quota::SignInLogin => "signin-login",
            Quota::SignInIp => "signin-ip",
            Quota::Appeal => "appeal-ip",
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

/// Decides `count` concurrent requests of `client` under `quota` in one write to `store`:
/// one decision per request, admitted while the window has room (each at the time of the
/// attempt that wrote), the rest refused with the true wait.
///
/// A conflicting write (another replica updated the log first) is retried after a short,
/// jittered, growing pause, for as long as it takes: there is no fixed number of attempts,
/// since giving up would refuse requests the quota still has room for. Only `give_up_at`
/// ends the retries: then the answer is `Ok(None)`, no decision, and the caller decides (the
/// [`Limiter`] counts those requests in its per-replica window, like when the store is down).
pub async fn admit_batch<S: WindowStore>(
    store: &S,
    quota: Quota,
    client: &str,
    count: usize,
    now_ms: impl Fn() -> u64,
    give_up_at: tokio::time::Instant,
) -> Result<Option<Vec<Decision>>, S::Error> {
    let key = quota.store_key(client);
    let mut attempt: u32 = 0;
    loop {
        if attempt > 0 {
            let now = tokio::time::Instant::now();
            if now >= give_up_at {
                return Ok(None);
            }
            // Jittered, growing backoff, so the writers of one log stop colliding.
            let ceiling = (200 * u64::from(attempt.min(20))).min(MAX_BACKOFF_MICROS);
            let pause = std::time::Duration::from_micros(rand::random_range(0..=ceiling));
            tokio::time::sleep_until((now + pause).min(give_up_at)).await;
        }
        attempt = attempt.saturating_add(1);
        let stored = store.load(&key).await?;
        let mut log = stored
            .as_ref()
            .map(|(bytes, _)| WindowLog::decode(bytes))
            .unwrap_or_default();
        let now = now_ms();
        let decisions: Vec<Decision> = (0..count).map(|_| log.admit(quota.limit(), now)).collect();
        if !decisions.iter().any(|d| d.allowed) {
            // Refused requests do not count: nothing to write.
            return Ok(Some(decisions));
        }
        let written = match stored {
            Some((_, revision)) => store.update(&key, log.encode(), revision).await?,
            None => store.create(&key, log.encode()).await?,
        };
        if written {
            return Ok(Some(decisions));
        }
    }
}

mod limiter;
pub use limiter::Limiter;

#[cfg(test)]
mod tests;

/// A trusted proxy: one address, or a network in CIDR notation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrustedProxy {
    network: std::net::IpAddr,
    prefix: u8,
}

impl std::str::FromStr for TrustedProxy {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let (address, prefix) = match text.trim().split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (text.trim(), None),
        };
        let network: std::net::IpAddr = address
            .parse()
            .map_err(|_| format!("'{text}' is not an IP address or CIDR"))?;
        let max = if network.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            Some(p) => p
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= max)
                .ok_or_else(|| format!("'{text}' has a bad prefix length"))?,
            None => max,
        };
        Ok(TrustedProxy { network, prefix })
    }
}

impl TrustedProxy {
    /// Whether `ip` is inside this network.
    pub fn contains(&self, ip: std::net::IpAddr) -> bool {
        let bits = |ip: std::net::IpAddr| match ip.to_canonical() {
            std::net::IpAddr::V4(v4) => (u128::from(u32::from(v4)), 32u32),
            std::net::IpAddr::V6(v6) => (u128::from(v6), 128u32),
        };
        let ((net, width), (addr, addr_width)) = (bits(self.network), bits(ip));
        if width != addr_width {
            return false;
        }
        let shift = width - u32::from(self.prefix);
        shift >= width || (net >> shift) == (addr >> shift)
    }
}

/// The client a public request is counted for: the socket peer, unless the peer is a trusted
/// proxy; then the right-most address of `X-Forwarded-For` (all its header lines, in order)
/// that is not itself a trusted proxy.
///
/// Walking from the right matters: every proxy appends the address it saw, so only the entries
/// our own proxies wrote can be believed, and a client can put anything to the left of them. An
/// edge that appends to a client's header (nginx's `$proxy_add_x_forwarded_for`) then still
/// yields the address that edge saw, never a forged one. An entry that is not an address stops
/// the walk at the last address believed.
pub fn client_ip<'a>(
    peer: std::net::IpAddr,
    forwarded_for: impl IntoIterator<Item = &'a str>,
    trusted: &[TrustedProxy],
) -> std::net::IpAddr {
    let is_trusted = |ip: std::net::IpAddr| trusted.iter().any(|proxy| proxy.contains(ip));
    let mut client = peer.to_canonical();
    if !is_trusted(client) {
        return client;
    }
    let lines: Vec<&str> = forwarded_for.into_iter().collect();
    let hops = lines
        .iter()
        .rev()
        .flat_map(|line| line.rsplit(','))
        .map(str::trim)
        .filter(|hop| !hop.is_empty());
    for hop in hops {
        let Some(ip) = parse_hop(hop) else { break };
        client = ip;
        if !is_trusted(client) {
            break;
        }
    }
    client
}

/// One `X-Forwarded-For` entry: an address, optionally with a port (`[v6]:port`, `v4:port`).
fn parse_hop(hop: &str) -> Option<std::net::IpAddr> {
    hop.parse::<std::net::IpAddr>()
        .or_else(|_| hop.parse::<std::net::SocketAddr>().map(|s| s.ip()))
        .ok()
        .map(|ip| ip.to_canonical())
}
