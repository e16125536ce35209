//! The live streams each key holds open: a cap on how many, and an end for all of them when
//! their key stops working.
//!
//! The key bucket watch ([`shared::key_directory::DirectorySync`]) tells this registry when a
//! key is revoked (its entry leaves the bucket) and when a rotated key's grace period ends (its
//! entry carries `expires_at`). Every stream holds a [`StreamSlot`] whose [`StreamSlot::ended`]
//! resolves at that moment, so the stream says `event: revoked` and closes; the slot is given
//! back when the stream ends for any reason (its response body is dropped). The count lives in
//! this process: with several replicas the cap holds per replica.

use crate::key_store::KeyEndings;
use chrono::{DateTime, Utc};
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use tokio::sync::watch;
use uuid::Uuid;

/// Default for `MAX_STREAMS_PER_KEY`.
pub const DEFAULT_MAX_STREAMS_PER_KEY: usize = 20;

/// Why a stream could not open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenRefused {
    /// The key already holds the most streams it may.
    TooMany {
        /// The cap.
        limit: usize,
    },
    /// The key stopped working after the request was authenticated (a revocation raced it).
    KeyEnded,
}

/// Open streams per key, and when keys end.
#[derive(Debug)]
pub struct OpenStreams {
    max_per_key: usize,
    keys: Mutex<Keys>,
}

#[derive(Debug, Default)]
struct Keys {
    /// Keys with open streams: how many, and the channel their streams learn their end from.
    open: HashMap<Uuid, PerKey>,
    /// When keys stop or stopped working, as the key bucket said (kept after the end, so a
    /// stream that was authenticated just before a revocation cannot open after it).
    ends: HashMap<Uuid, DateTime<Utc>>,
}

#[derive(Debug)]
struct PerKey {
    count: usize,
    end: watch::Sender<Option<DateTime<Utc>>>,
}

impl OpenStreams {
    /// A registry allowing `max_per_key` open streams per key (at least 1).
    pub fn new(max_per_key: usize) -> Arc<OpenStreams> {
        Arc::new(OpenStreams {
            max_per_key: max_per_key.max(1),
            keys: Mutex::new(Keys::default()),
        })
    }

    /// The cap per key.
    pub fn max_per_key(&self) -> usize {
        self.max_per_key
    }

    /// How many streams `key_id` holds open now.
    pub fn open_count(&self, key_id: Uuid) -> usize {
        self.lock().open.get(&key_id).map_or(0, |key| key.count)
    }

    /// Takes one of `key_id`'s stream slots.
    pub fn open(self: &Arc<Self>, key_id: Uuid) -> Result<StreamSlot, OpenRefused> {
        let mut keys = self.lock();
        let end = keys.ends.get(&key_id).copied();
        if end.is_some_and(|at| at <= Utc::now()) {
            return Err(OpenRefused::KeyEnded);
        }
        let key = keys.open.entry(key_id).or_insert_with(|| PerKey {
            count: 0,
            end: watch::Sender::new(end),
        });
        if key.count >= self.max_per_key {
            return Err(OpenRefused::TooMany {
                limit: self.max_per_key,
            });
        }
        key.count += 1;
        Ok(StreamSlot {
            streams: self.clone(),
            key_id,
            end: key.end.subscribe(),
        })
    }

    /// Records that `key_id` stops working at `at` (now, for a revocation) and tells its open
    /// streams. An earlier end already known wins.
    fn set_end(&self, key_id: Uuid, at: DateTime<Utc>) {
        let mut keys = self.lock();
        let end = *keys
            .ends
            .entry(key_id)
            .and_modify(|known| *known = (*known).min(at))
            .or_insert(at);
        if let Some(key) = keys.open.get(&key_id) {
            key.end.send_replace(Some(end));
        }
    }

    fn release(&self, key_id: Uuid) {
        let mut keys = self.lock();
        if let Some(key) = keys.open.get_mut(&key_id) {
            key.count = key.count.saturating_sub(1);
            if key.count == 0 {
                keys.open.remove(&key_id);
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Keys> {
        self.keys.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl KeyEndings for OpenStreams {
    fn revoked(&self, key_id: Uuid) {
        self.set_end(key_id, Utc::now());
    }

    fn expires(&self, key_id: Uuid, at: DateTime<Utc>) {
        self.set_end(key_id, at);
    }
}

/// One open stream's place in its key's count; given back on drop.
#[derive(Debug)]
pub struct StreamSlot {
    streams: Arc<OpenStreams>,
    key_id: Uuid,
    end: watch::Receiver<Option<DateTime<Utc>>>,
}

impl StreamSlot {
    /// Resolves when the slot's key stops working (at once if it already has); never if the
    /// registry goes away first.
    pub fn ended(&self) -> impl Future<Output = ()> + Send + use<> {
        let mut end = self.end.clone();
        async move {
            loop {
                let at = *end.borrow_and_update();
                let wait = at.map(|at| (at - Utc::now()).to_std().unwrap_or_default());
                match wait {
                    Some(wait) if wait.is_zero() => return,
                    Some(wait) => {
                        tokio::select! {
                            () = tokio::time::sleep(wait) => return,
                            changed = end.changed() => if changed.is_err() {
                                // No more changes can come; the known end still holds.
                                tokio::time::sleep(wait).await;
                                return;
                            },
                        }
                    }
                    None => {
                        if end.changed().await.is_err() {
                            std::future::pending::<()>().await;
                        }
                    }
                }
            }
        }
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        self.streams.release(self.key_id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Duration;
    use futures::FutureExt;

    #[test]
    fn the_cap_counts_open_slots_per_key() {
        let streams = OpenStreams::new(2);
        let (key, other) = (Uuid::now_v7(), Uuid::now_v7());
        let first = streams.open(key).expect("first");
        let _second = streams.open(key).expect("second");
        assert_eq!(
            streams.open(key).err(),
            Some(OpenRefused::TooMany { limit: 2 })
        );
        assert!(streams.open(other).is_ok(), "another key has its own cap");
        drop(first);
        assert_eq!(streams.open_count(key), 1);
        assert!(streams.open(key).is_ok(), "a given-back slot is free again");
    }

    #[tokio::test]
    async fn a_revocation_ends_open_slots_and_refuses_new_ones() {
        let streams = OpenStreams::new(5);
        let key = Uuid::now_v7();
        let slot = streams.open(key).expect("open");
        let ended = slot.ended();
        tokio::pin!(ended);
        assert!((&mut ended).now_or_never().is_none(), "a live key");
        streams.revoked(key);
        tokio::time::timeout(std::time::Duration::from_secs(1), ended)
            .await
            .expect("ends at once");
        assert_eq!(streams.open(key).err(), Some(OpenRefused::KeyEnded));
    }

    #[tokio::test]
    async fn a_grace_period_ends_slots_at_its_end() {
        let streams = OpenStreams::new(5);
        let key = Uuid::now_v7();
        let early = streams.open(key).expect("open");
        streams.expires(key, Utc::now() + Duration::milliseconds(300));
        // A slot opened after the end was announced learns it too.
        let late = streams.open(key).expect("still in grace");
        let started = std::time::Instant::now();
        tokio::time::timeout(std::time::Duration::from_secs(2), async {
            early.ended().await;
            late.ended().await;
        })
        .await
        .expect("both end");
        assert!(started.elapsed() >= std::time::Duration::from_millis(250));
        assert_eq!(streams.open(key).err(), Some(OpenRefused::KeyEnded));
    }
}
