//! Accounts and their API keys: PostgreSQL is the record, the KV key bucket the live projection.
//!
//! Every change writes PostgreSQL inside a transaction, changes the bucket, then commits: a
//! failed bucket write rolls the row back, so the two never disagree about a key the caller was
//! told about. The HTTP handlers and the command line both go through [`KeyStore`].

mod accounts;
mod lifecycle;
mod sync;
mod usage;

pub use accounts::{Account, check_account_name};

pub use lifecycle::{MAX_GRACE_SECONDS, check_grace_seconds};
pub use shared::key_directory::KeyEndings;
pub use sync::Reconciled;
pub use usage::{record_key_usage, spawn_usage_writer};

use async_nats::jetstream::kv;
use bytes::Bytes;
use chrono::{DateTime, Utc};
use serde::Serialize;
use shared::keys::{KeyEntry, KeyKind, generate_secret, hash_secret};
use shared::validation::{FieldError, FieldErrors};
use sqlx::{PgConnection, PgPool};
use utoipa::ToSchema;
use uuid::Uuid;

/// Why a key or account operation failed.
#[derive(Debug, thiserror::Error)]
pub enum KeyStoreError {
    /// No account has that id.
    #[error("there is no account with id {0}")]
    AccountNotFound(Uuid),
    /// No key has that id.
    #[error("there is no key with id {0}")]
    KeyNotFound(Uuid),
    /// The key is already revoked (or rotated).
    #[error("key {0} is already revoked")]
    AlreadyRevoked(Uuid),
    /// The input breaks a rule.
    #[error("invalid input: {}", describe(.0))]
    Rejected(Vec<FieldError>),
    /// A row holds something this build cannot read.
    #[error("stored key data is invalid: {0}")]
    Corrupt(String),
    /// PostgreSQL failed.
    #[error("key store query failed")]
    Database(#[from] sqlx::Error),
    /// The KV bucket failed.
    #[error("key bucket operation failed")]
    Bucket(#[source] async_nats::Error),
}

/// `field: message; ...` for an error message.
fn describe(errors: &[FieldError]) -> String {
    errors
        .iter()
        .map(|e| format!("{}: {}", e.field, e.message))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Wraps any bucket error.
fn bucket_error(error: impl std::error::Error + Send + Sync + 'static) -> KeyStoreError {
    KeyStoreError::Bucket(Box::new(error))
}

/// A key just issued: the only time its secret is shown.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct IssuedKey {
    /// The key's id (UUIDv7).
    pub id: Uuid,
    /// The account it belongs to.
    pub account_id: Uuid,
    /// `plugin` or `dashboard`.
    pub kind: KeyKind,
    /// Free-text label, e.g. the server it is for.
    pub label: Option<String>,
    /// The secret: send it as `Authorization: Bearer <key>`. Not retrievable later.
    pub key: String,
    /// When it was created.
    pub created_at: DateTime<Utc>,
}

/// A key as listed: never its secret.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct KeySummary {
    /// The key's id.
    pub id: Uuid,
    /// `plugin` or `dashboard`.
    pub kind: KeyKind,
    /// Free-text label.
    pub label: Option<String>,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it stopped (or, during a rotation's grace period, will stop) working.
    pub revoked_at: Option<DateTime<Utc>>,
    /// When it was last used, if recorded.
    pub last_used_at: Option<DateTime<Utc>>,
}

/// One `api_keys` row.
#[derive(Debug, sqlx::FromRow)]
struct KeyRow {
    id: Uuid,
    account_id: Uuid,
    kind: String,
    label: Option<String>,
    key_hash: String,
    created_at: DateTime<Utc>,
    revoked_at: Option<DateTime<Utc>>,
    last_used_at: Option<DateTime<Utc>>,
}

impl KeyRow {
    fn kind(&self) -> Result<KeyKind, KeyStoreError> {
        match self.kind.as_str() {
            "plugin" => Ok(KeyKind::Plugin),
            "dashboard" => Ok(KeyKind::Dashboard),
            other => Err(KeyStoreError::Corrupt(format!(
                "key {} has unknown kind '{other}'",
                self.id
            ))),
        }
    }

    /// What the bucket holds for this key while it is live.
    fn entry(&self) -> Result<KeyEntry, KeyStoreError> {
        Ok(KeyEntry {
            key_id: self.id,
            account_id: self.account_id,
            kind: self.kind()?,
            expires_at: self.revoked_at,
        })
    }
}

const KEY_COLUMNS: &str =
    "id, account_id, kind, label, key_hash, created_at, revoked_at, last_used_at";

/// The JSON the bucket stores for an entry.
fn entry_bytes(entry: &KeyEntry) -> Result<Bytes, KeyStoreError> {
    serde_json::to_vec(entry)
        .map(Bytes::from)
        .map_err(|e| KeyStoreError::Corrupt(e.to_string()))
}

/// Checks a key's kind (only plugin and dashboard keys are issued) and label (at most 200).
pub fn check_new_key(kind: &str, label: Option<&str>) -> Result<KeyKind, KeyStoreError> {
    let mut errors = FieldErrors::new();
    let kind = match kind {
        "plugin" => Some(KeyKind::Plugin),
        "dashboard" => Some(KeyKind::Dashboard),
        _ => {
            errors.push(
                "kind",
                "invalid_kind",
                "must be \"plugin\" or \"dashboard\"",
            );
            None
        }
    };
    errors.text("label", label, 0, 200);
    errors.into_result().map_err(KeyStoreError::Rejected)?;
    kind.ok_or_else(|| KeyStoreError::Corrupt("unreachable: kind checked above".into()))
}

/// Accounts and keys, in PostgreSQL and the key bucket.
#[derive(Clone, Debug)]
pub struct KeyStore {
    pool: PgPool,
    bucket: kv::Store,
}

impl KeyStore {
    /// A store over `pool` and the key `bucket`.
    pub fn new(pool: PgPool, bucket: kv::Store) -> Self {
        Self { pool, bucket }
    }

    /// The key bucket.
    pub fn bucket(&self) -> &kv::Store {
        &self.bucket
    }

    /// Issues a new key of `kind` for the account.
    pub async fn create_key(
        &self,
        account_id: Uuid,
        kind: KeyKind,
        label: Option<String>,
    ) -> Result<IssuedKey, KeyStoreError> {
        let mut tx = self.pool.begin().await?;
        let issued = insert_key(&mut tx, account_id, kind, label).await?;
        self.publish_new(&issued).await?;
        if let Err(error) = tx.commit().await {
            self.forget_secret(&issued.key).await;
            return Err(error.into());
        }
        Ok(issued)
    }

    /// The account's keys, oldest first, without secrets.
    pub async fn list_keys(&self, account_id: Uuid) -> Result<Vec<KeySummary>, KeyStoreError> {
        self.require_account(account_id).await?;
        let rows = sqlx::query_as::<_, KeyRow>(&format!(
            "SELECT {KEY_COLUMNS} FROM api_keys WHERE account_id = $1 ORDER BY created_at, id"
        ))
        .bind(account_id)
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter()
            .map(|row| {
                Ok(KeySummary {
                    kind: row.kind()?,
                    id: row.id,
                    label: row.label,
                    created_at: row.created_at,
                    revoked_at: row.revoked_at,
                    last_used_at: row.last_used_at,
                })
            })
            .collect()
    }

    /// Puts a just-issued key's entry into the bucket.
    async fn publish_new(&self, issued: &IssuedKey) -> Result<(), KeyStoreError> {
        let entry = KeyEntry {
            key_id: issued.id,
            account_id: issued.account_id,
            kind: issued.kind,
            expires_at: None,
        };
        self.bucket
            .put(hash_secret(&issued.key), entry_bytes(&entry)?)
            .await
            .map_err(bucket_error)?;
        Ok(())
    }

    /// Best effort: removes the entry of a secret that was never handed out.
    async fn forget_secret(&self, secret: &str) {
        if let Err(error) = self.bucket.delete(hash_secret(secret)).await {
            tracing::warn!(%error, "could not remove the bucket entry of an unissued key");
        }
    }
}

/// Inserts a key row (inside the caller's transaction) and returns the key with its secret.
async fn insert_key(
    conn: &mut PgConnection,
    account_id: Uuid,
    kind: KeyKind,
    label: Option<String>,
) -> Result<IssuedKey, KeyStoreError> {
    let secret = generate_secret(kind);
    let id = Uuid::now_v7();
    // INSERT ... SELECT FROM accounts: an unknown account inserts nothing instead of raising.
    let created_at: Option<DateTime<Utc>> = sqlx::query_scalar(
        "INSERT INTO api_keys (id, account_id, kind, label, key_hash) \
         SELECT $1, a.id, $3, $4, $5 FROM accounts a WHERE a.id = $2 \
         RETURNING created_at",
    )
    .bind(id)
    .bind(account_id)
    .bind(kind.as_str())
    .bind(label.as_deref())
    .bind(hash_secret(&secret))
    .fetch_optional(&mut *conn)
    .await?;
    let created_at = created_at.ok_or(KeyStoreError::AccountNotFound(account_id))?;
    Ok(IssuedKey {
        id,
        account_id,
        kind,
        label,
        key: secret,
        created_at,
    })
}
