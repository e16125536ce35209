//! Rotation and revocation.

use super::{
    IssuedKey, KEY_COLUMNS, KeyRow, KeyStore, KeyStoreError, bucket_error, entry_bytes, insert_key,
};
use chrono::{DateTime, Duration, Utc};
use shared::validation::FieldError;
use sqlx::PgConnection;
use uuid::Uuid;

/// The longest grace period a rotation may give the old key: one week.
pub const MAX_GRACE_SECONDS: i64 = 604_800;

/// Locks the key's row for the rest of the transaction.
async fn lock_key(conn: &mut PgConnection, key_id: Uuid) -> Result<KeyRow, KeyStoreError> {
    sqlx::query_as::<_, KeyRow>(&format!(
        "SELECT {KEY_COLUMNS} FROM api_keys WHERE id = $1 FOR UPDATE"
    ))
    .bind(key_id)
    .fetch_optional(conn)
    .await?
    .ok_or(KeyStoreError::KeyNotFound(key_id))
}

/// Checks a rotation's grace period.
pub fn check_grace_seconds(grace_seconds: i64) -> Result<(), KeyStoreError> {
    if (0..=MAX_GRACE_SECONDS).contains(&grace_seconds) {
        Ok(())
    } else {
        Err(KeyStoreError::Rejected(vec![FieldError {
            field: "grace_seconds".into(),
            code: "out_of_range".into(),
            message: format!("must be between 0 and {MAX_GRACE_SECONDS} (one week)"),
        }]))
    }
}

impl KeyStore {
    /// Issues a replacement of the same kind, account and label; the old key keeps working
    /// for `grace_seconds` (0..=604800), then stops. A key already revoked or rotated is
    /// refused with [`KeyStoreError::AlreadyRevoked`].
    pub async fn rotate_key(
        &self,
        key_id: Uuid,
        grace_seconds: i64,
    ) -> Result<IssuedKey, KeyStoreError> {
        check_grace_seconds(grace_seconds)?;
        let mut tx = self.pool.begin().await?;
        let old = lock_key(&mut tx, key_id).await?;
        // A rotated key already has its end set; rotating it again would fork the lineage.
        if old.revoked_at.is_some() {
            return Err(KeyStoreError::AlreadyRevoked(key_id));
        }
        let issued = insert_key(&mut tx, old.account_id, old.kind()?, old.label.clone()).await?;
        let ends_at: DateTime<Utc> = sqlx::query_scalar(
            "UPDATE api_keys SET revoked_at = $2 WHERE id = $1 RETURNING revoked_at",
        )
        .bind(key_id)
        .bind(Utc::now() + Duration::seconds(grace_seconds))
        .fetch_one(&mut *tx)
        .await?;
        let old = KeyRow {
            revoked_at: Some(ends_at),
            ..old
        };
        let published = async {
            self.publish_new(&issued).await?;
            if grace_seconds == 0 {
                self.bucket
                    .delete(&old.key_hash)
                    .await
                    .map_err(bucket_error)?;
            } else {
                self.bucket
                    .put(&old.key_hash, entry_bytes(&old.entry()?)?)
                    .await
                    .map_err(bucket_error)?;
            }
            tx.commit().await?;
            Ok::<_, KeyStoreError>(())
        }
        .await;
        if let Err(error) = published {
            // The new secret was never handed out; its entry must not linger.
            self.forget_secret(&issued.key).await;
            return Err(error);
        }
        Ok(issued)
    }

    /// Revokes a key now: its bucket entry is deleted, so every service refuses it within
    /// milliseconds. A key inside a rotation's grace period can still be revoked early.
    pub async fn revoke_key(&self, key_id: Uuid) -> Result<(), KeyStoreError> {
        let mut tx = self.pool.begin().await?;
        let key = lock_key(&mut tx, key_id).await?;
        if key.revoked_at.is_some_and(|at| at <= Utc::now()) {
            return Err(KeyStoreError::AlreadyRevoked(key_id));
        }
        sqlx::query("UPDATE api_keys SET revoked_at = now() WHERE id = $1")
            .bind(key_id)
            .execute(&mut *tx)
            .await?;
        self.bucket
            .delete(&key.key_hash)
            .await
            .map_err(bucket_error)?;
        tx.commit().await?;
        Ok(())
    }
}
