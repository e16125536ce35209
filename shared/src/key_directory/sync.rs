//! Keeping a [`KeyDirectory`] in line with the key bucket: one watch at a time, read again from
//! the start whenever it fails or the NATS connection under it comes back.
//!
//! Why re-read after a reconnect: the client resumes a broken watch from the last sequence it
//! saw, which replays the deletes written meanwhile but not a key that left the bucket without
//! a trace (its delete marker purged, or the bucket lost and recreated). A fresh watch delivers
//! the last value of every key the bucket holds now, so anything in the directory it does not
//! deliver is gone and is dropped, the same in every service.

use super::KeyDirectory;
use crate::keys::KeyEntry;
use async_nats::jetstream::kv::{self, Operation};
use chrono::{DateTime, Utc};
use futures::StreamExt;
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

const MIN_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// How often the watch looks whether the connection was re-established under it.
const RECONNECT_CHECK: Duration = Duration::from_millis(100);

/// Told when a key stops working, so that what it holds open (live streams) ends with it.
pub trait KeyEndings: Send + Sync {
    /// The key was revoked: its entry left the bucket.
    fn revoked(&self, key_id: Uuid);
    /// The key stops working at `at` (a rotation's grace period).
    fn expires(&self, key_id: Uuid, at: DateTime<Utc>);
}

/// The task that fills a [`KeyDirectory`] from the key bucket and keeps it current.
pub struct DirectorySync {
    client: async_nats::Client,
    bucket: kv::Store,
    directory: Arc<KeyDirectory>,
    endings: Option<Arc<dyn KeyEndings>>,
}

/// Why one watch stopped without an error.
enum WatchEnd {
    Shutdown,
    Reconnected,
}

impl DirectorySync {
    /// Mirrors `bucket` (opened on `client`) into `directory`.
    pub fn new(
        client: async_nats::Client,
        bucket: kv::Store,
        directory: Arc<KeyDirectory>,
    ) -> Self {
        Self {
            client,
            bucket,
            directory,
            endings: None,
        }
    }

    /// Also tells `endings` when a key is revoked or gets an end (a rotation's grace period).
    pub fn with_endings(mut self, endings: Arc<dyn KeyEndings>) -> Self {
        self.endings = Some(endings);
        self
    }

    /// Runs until `shutdown`, re-watching with backoff after errors.
    pub fn spawn(self, shutdown: CancellationToken) -> JoinHandle<()> {
        tokio::spawn(async move { self.run(shutdown).await })
    }

    async fn run(self, shutdown: CancellationToken) {
        let mut backoff = MIN_BACKOFF;
        loop {
            match self.watch_once(&shutdown, &mut backoff).await {
                Ok(WatchEnd::Shutdown) => return,
                Ok(WatchEnd::Reconnected) => {
                    tracing::info!("NATS connection re-established; re-reading the key bucket");
                    continue;
                }
                // Closing the connection at shutdown ends the watch with an error too.
                Err(_) if shutdown.is_cancelled() => return,
                Err(error) => {
                    tracing::warn!(%error, retry_in = ?backoff, "key bucket watch failed");
                }
            }
            tokio::select! {
                () = shutdown.cancelled() => return,
                () = tokio::time::sleep(backoff) => {}
            }
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }

    /// One watch: applies the bucket's current values, then every change, until shutdown, an
    /// error, or a reconnect of the connection under it.
    async fn watch_once(
        &self,
        shutdown: &CancellationToken,
        backoff: &mut Duration,
    ) -> Result<WatchEnd, async_nats::Error> {
        let connects = self.connects();
        let mut watch = self.bucket.watch_with_history(">").await?;
        // `status()` holds the info cached when the handle was made; ask the server for now.
        let stored = self.bucket.stream.get_info().await?.state.messages;
        // What the directory holds that this watch has not delivered (yet).
        let mut not_redelivered = self.directory.hashes();
        let mut loading = true;
        if stored == 0 {
            loading = false;
            self.end_load(&mut not_redelivered);
        }
        let mut check = tokio::time::interval(RECONNECT_CHECK);
        check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            let entry = tokio::select! {
                biased;
                () = shutdown.cancelled() => return Ok(WatchEnd::Shutdown),
                _ = check.tick() => {
                    if self.connects() != connects {
                        return Ok(WatchEnd::Reconnected);
                    }
                    continue;
                }
                entry = watch.next() => entry,
            };
            let entry = entry.ok_or("key bucket watch ended")??;
            not_redelivered.remove(&entry.key);
            self.apply(&entry);
            if loading && entry.delta == 0 {
                loading = false;
                *backoff = MIN_BACKOFF;
                self.end_load(&mut not_redelivered);
            }
        }
    }

    /// How many times the client has connected (the first connect included).
    fn connects(&self) -> u64 {
        self.client.statistics().connects.load(Ordering::Relaxed)
    }

    /// Applies one entry, then tells the endings hook what it ended.
    fn apply(&self, entry: &kv::Entry) {
        let value = match entry.operation {
            Operation::Put => match serde_json::from_slice::<KeyEntry>(&entry.value) {
                Ok(value) => Some(value),
                Err(error) => {
                    tracing::warn!(%error, revision = entry.revision, "unreadable key entry ignored");
                    None
                }
            },
            Operation::Delete | Operation::Purge => None,
        };
        let expires = value
            .as_ref()
            .and_then(|v| v.expires_at.map(|at| (v.key_id, at)));
        let removed = value.is_none();
        let previous = self.directory.apply(&entry.key, value);
        // After the directory: a stream opened from here on is refused by authentication.
        if let Some(endings) = &self.endings {
            if let Some(previous) = previous.filter(|_| removed) {
                endings.revoked(previous.key_id);
            }
            if let Some((key_id, at)) = expires {
                endings.expires(key_id, at);
            }
        }
    }

    /// Drops what the bucket no longer holds and opens the directory for business.
    fn end_load(&self, not_redelivered: &mut HashSet<String>) {
        for hash in not_redelivered.drain() {
            let gone = self.directory.apply(&hash, None);
            if let (Some(gone), Some(endings)) = (gone, &self.endings) {
                endings.revoked(gone.key_id);
            }
        }
        self.directory.mark_loaded();
    }
}

impl std::fmt::Debug for DirectorySync {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DirectorySync")
            .field("bucket", &self.bucket.name)
            .field("directory", &self.directory)
            .finish_non_exhaustive()
    }
}
