//! Keeping the bucket in line with PostgreSQL (the directory follows the bucket through
//! [`shared::key_directory::DirectorySync`]).

use super::{KEY_COLUMNS, KeyRow, KeyStore, KeyStoreError, bucket_error, entry_bytes};
use chrono::Utc;
use futures::StreamExt;
use shared::keys::KeyEntry;
use std::collections::HashSet;

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
