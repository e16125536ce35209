//! Keeping every process's caches in line with the buckets.

use super::cache::{Cache, forget_period};
use super::{Keyring, KeyringError, unavailable};
use crate::privacy::FieldClass;
use async_nats::jetstream::kv::Operation;
use futures::StreamExt;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

const MIN_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(5);

impl Keyring {
    // ---- the watch ----

    /// Keeps this process's caches in line with the buckets until `shutdown`: a destroyed or
    /// new key, or a changed policy, drops what was cached for it. After any watch error the
    /// caches are emptied (they refill on demand) and the watch starts again.
    pub fn spawn_watch(&self, shutdown: CancellationToken) -> JoinHandle<()> {
        let keyring = self.clone();
        tokio::spawn(async move {
            let mut backoff = MIN_BACKOFF;
            loop {
                let result = tokio::select! {
                    () = shutdown.cancelled() => return,
                    result = keyring.watch_once() => result,
                };
                if shutdown.is_cancelled() {
                    return;
                }
                *keyring.cache() = Cache::default();
                match result {
                    Ok(()) => backoff = MIN_BACKOFF,
                    Err(error) => {
                        tracing::warn!(%error, retry_in = ?backoff, "privacy bucket watch failed");
                        backoff = (backoff * 2).min(MAX_BACKOFF);
                    }
                }
                tokio::select! {
                    () = shutdown.cancelled() => return,
                    () = tokio::time::sleep(backoff) => {}
                }
            }
        })
    }

    async fn watch_once(&self) -> Result<(), KeyringError> {
        let players = self.inner.players.watch_all().await.map_err(unavailable)?;
        let accounts = self.inner.accounts.watch_all().await.map_err(unavailable)?;
        // Anything cached before the watches started may be stale.
        *self.cache() = Cache::default();
        let mut changes = futures::stream::select(players, accounts);
        while let Some(entry) = changes.next().await {
            let entry = entry.map_err(unavailable)?;
            self.changed(&entry.key, entry.operation);
        }
        Ok(())
    }

    /// Drops what the cache holds for the bucket entry `name`.
    fn changed(&self, name: &str, operation: Operation) {
        let mut cache = self.cache();
        let mut parts = name.split('.');
        match (parts.next(), parts.next(), parts.next(), parts.next()) {
            (Some("p"), Some(account), Some(player), None) => {
                if let (Ok(a), Ok(p)) = (account.parse(), player.parse()) {
                    // A new key replaces only a cached "none"; a key in the cache is current
                    // (a destroyed key's purge comes first, in order), and dropping it would
                    // make every new player's first requests fetch their key twice.
                    let keep = operation == Operation::Put
                        && cache.players.get(&(a, p)).is_some_and(|e| e.key.is_some());
                    if !keep {
                        cache.players.remove(&(a, p));
                    }
                }
            }
            (Some("d"), Some(account), Some(class), Some(day)) => {
                if let (Ok(a), Some(c), Ok(d)) =
                    (account.parse(), FieldClass::parse(class), day.parse())
                {
                    let keep = operation == Operation::Put
                        && cache.periods.get(&(a, c, d)).is_some_and(Option::is_some);
                    if !keep {
                        forget_period(&mut cache, a, c, d);
                    }
                }
            }
            (Some("policy"), Some(account), None, None) => {
                if let Ok(a) = account.parse() {
                    cache.policies.remove(&a);
                }
            }
            (Some("links"), Some(account), None, None) => {
                if let Ok(a) = account.parse() {
                    cache.links.remove(&a);
                }
            }
            _ => tracing::debug!(name, ?operation, "unknown privacy bucket entry"),
        }
    }
}
