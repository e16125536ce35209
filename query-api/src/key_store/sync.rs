//! Keeping the bucket in line with PostgreSQL, and the in-memory directory in line with the bucket.

use super::{KEY_COLUMNS, KeyRow, KeyStore, KeyStoreError, bucket_error, entry_bytes};
use async_nats::jetstream::kv::{self, Operation};
use chrono::{DateTime, Utc};
use futures::StreamExt;
use shared::keys::{KeyDirectory, KeyEntry};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

/// Told when a key stops working, so that what it holds open (live streams) ends with it.
pub trait KeyEndings: Send + Sync {
    /// The key was revoked: its entry left the bucket.
    fn revoked(&self, key_id: Uuid);
    /// The key stops working at `at` (a rotation's grace period).
    fn expires(&self, key_id: Uuid, at: DateTime<Utc>);
}

/// What a start-up reconciliation changed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Reconciled {
    /// Live keys whose entry was missing or stale and was put.
    pub put: usize,
    /// Revoked keys whose entry was still in the bucket and was deleted.
    pub deleted: usize,
}

impl KeyStore {
    /// Makes the bucket match PostgreSQL: puts every live key's entry (when missing or
    /// different), deletes the entries of revoked keys. Run at start.
    pub async fn reconcile(&self) -> Result<Reconciled, KeyStoreError> {
        let mut in_bucket = HashSet::new();
        let mut keys = self.bucket.keys().await.map_err(bucket_error)?;
        while let Some(key) = keys.next().await {
            in_bucket.insert(key.map_err(bucket_error)?);
        }
        let rows = sqlx::query_as::<_, KeyRow>(&format!("SELECT {KEY_COLUMNS} FROM api_keys"))
            .fetch_all(&self.pool)
            .await?;
        let now = Utc::now();
        let mut done = Reconciled::default();
        let mut put_ids = Vec::new();
        for row in rows {
            if row.revoked_at.is_some_and(|at| at <= now) {
                if in_bucket.contains(&row.key_hash) {
                    self.bucket
                        .delete(&row.key_hash)
                        .await
                        .map_err(bucket_error)?;
                    done.deleted += 1;
                }
                continue;
            }
            let want = row.entry()?;
            let current = self.bucket.get(&row.key_hash).await.map_err(bucket_error)?;
            let current: Option<KeyEntry> =
                current.and_then(|bytes| serde_json::from_slice(&bytes).ok());
            if current.as_ref() != Some(&want) {
                self.bucket
                    .put(&row.key_hash, entry_bytes(&want)?)
                    .await
                    .map_err(bucket_error)?;
                put_ids.push(row.id);
                done.put += 1;
            }
        }
        // A key revoked between our read and our put must not come back to life: revocation
        // commits PostgreSQL before it deletes the entry, so a re-read after our puts sees it.
        if !put_ids.is_empty() {
            let revoked: Vec<String> = sqlx::query_scalar(
                "SELECT key_hash FROM api_keys WHERE id = ANY($1) AND revoked_at <= now()",
            )
            .bind(&put_ids)
            .fetch_all(&self.pool)
            .await?;
            for hash in revoked {
                self.bucket.delete(&hash).await.map_err(bucket_error)?;
            }
        }
        Ok(done)
    }
}

const MIN_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// Fills `directory` from the bucket and keeps it current until `shutdown`, telling `endings`
/// when a key stops working; re-watches with backoff after errors.
pub fn spawn_directory_sync(
    bucket: kv::Store,
    directory: Arc<KeyDirectory>,
    endings: Arc<dyn KeyEndings>,
    shutdown: CancellationToken,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let sink = Sink {
            directory: &directory,
            endings: endings.as_ref(),
        };
        // The hashes in the directory (it cannot list them) with their key ids, so a re-watch
        // can drop the ones that vanished from the bucket while the watch was down, and a
        // delete (which carries only the hash) can name the key that ended.
        let mut known = HashMap::new();
        let mut backoff = MIN_BACKOFF;
        loop {
            match watch_once(&bucket, sink, &mut known, &shutdown).await {
                Ok(()) => return,
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
    })
}

/// Where the watch applies what it reads.
#[derive(Clone, Copy)]
struct Sink<'a> {
    directory: &'a KeyDirectory,
    endings: &'a dyn KeyEndings,
}

/// One watch: applies the current values, then every change. `Ok` only on shutdown.
async fn watch_once(
    bucket: &kv::Store,
    sink: Sink<'_>,
    known: &mut HashMap<String, Uuid>,
    shutdown: &CancellationToken,
) -> Result<(), async_nats::Error> {
    let Sink { directory, endings } = sink;
    let mut watch = bucket.watch_with_history(">").await?;
    // `status()` holds the info cached when the handle was made; ask the server for now.
    let stored = bucket.stream.get_info().await?.state.messages;
    let mut not_redelivered: HashSet<String> = known.keys().cloned().collect();
    let mut initial_done = false;
    if stored == 0 {
        initial_done = true;
        end_initial_load(sink, known, &mut not_redelivered);
    }
    loop {
        let entry = tokio::select! {
            biased;
            () = shutdown.cancelled() => return Ok(()),
            entry = watch.next() => entry,
        };
        let entry = entry.ok_or("key bucket watch ended")??;
        not_redelivered.remove(&entry.key);
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
        let ended = match &value {
            Some(value) => {
                known.insert(entry.key.clone(), value.key_id);
                None
            }
            None => known.remove(&entry.key),
        };
        let expires = value
            .as_ref()
            .and_then(|v| v.expires_at.map(|at| (v.key_id, at)));
        directory.apply(&entry.key, value);
        // After the directory: a stream opened from here on is refused by authentication.
        if let Some(key_id) = ended {
            endings.revoked(key_id);
        }
        if let Some((key_id, at)) = expires {
            endings.expires(key_id, at);
        }
        if !initial_done && entry.delta == 0 {
            initial_done = true;
            end_initial_load(sink, known, &mut not_redelivered);
        }
    }
}

/// Drops what the bucket no longer holds and opens the directory for business.
fn end_initial_load(
    sink: Sink<'_>,
    known: &mut HashMap<String, Uuid>,
    not_redelivered: &mut HashSet<String>,
) {
    for hash in not_redelivered.drain() {
        sink.directory.apply(&hash, None);
        if let Some(key_id) = known.remove(&hash) {
            sink.endings.revoked(key_id);
        }
    }
    sink.directory.mark_loaded();
}
