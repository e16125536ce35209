//! The audit log: who did what to whom, when and from which (hashed) address. Every team change
//! and every change made through the dashboard writes one row, in the same transaction as the
//! change where there is one, so the log never claims a change that did not happen.

use super::Actor;
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use sqlx::{PgExecutor, PgPool};
use uuid::Uuid;

/// Rows per page of the audit page.
pub const PAGE_SIZE: i64 = 50;

/// One thing to record.
#[derive(Debug)]
pub struct AuditEntry<'a> {
    /// The account it happened in (`None`: a failed sign-in with an unknown login).
    pub account_id: Option<Uuid>,
    /// Who did it.
    pub actor: &'a Actor,
    /// What, as a stable snake_case word (`member_invited`, `key_revoked`, ...).
    pub action: &'static str,
    /// What it was done to (a login, a key id), if anything.
    pub target: Option<String>,
    /// Anything else worth keeping (the new role, a key's kind). Never a secret.
    pub detail: Value,
}

/// Writes one row.
pub async fn record(
    executor: impl PgExecutor<'_>,
    entry: AuditEntry<'_>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO audit_log (id, account_id, actor_member_id, actor, action, target, detail, ip_hash) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(Uuid::now_v7())
    .bind(entry.account_id)
    .bind(entry.actor.member_id())
    .bind(truncate(entry.actor.label(), 254))
    .bind(entry.action)
    .bind(entry.target.map(|t| truncate(&t, 254)))
    .bind(entry.detail)
    .bind(entry.actor.ip_hash.as_deref())
    .execute(executor)
    .await?;
    Ok(())
}

/// Keeps the first `max` characters (a login tried at sign-in may be anything).
fn truncate(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

/// One row as read back.
#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct AuditRow {
    /// The row's id (UUIDv7; the page cursor).
    pub id: Uuid,
    /// When.
    pub at: DateTime<Utc>,
    /// Who, as shown.
    pub actor: String,
    /// What.
    pub action: String,
    /// To what.
    pub target: Option<String>,
    /// The rest.
    pub detail: Value,
    /// The client IP's keyed hash.
    pub ip_hash: Option<String>,
}

impl AuditRow {
    /// The detail as compact JSON for display (`""` when empty).
    pub fn detail_text(&self) -> String {
        match &self.detail {
            Value::Object(map) if map.is_empty() => String::new(),
            other => other.to_string(),
        }
    }

    /// The first 12 hex digits of the IP hash: enough to see "same address", short to read.
    pub fn ip_short(&self) -> &str {
        self.ip_hash
            .as_deref()
            .map_or("", |hash| hash.get(..12).unwrap_or(hash))
    }
}

/// A page of an account's log, newest first: the rows older than `before` (the id of the last
/// row of the previous page), at most [`PAGE_SIZE`].
pub async fn page(
    pool: &PgPool,
    account_id: Uuid,
    before: Option<Uuid>,
) -> Result<Vec<AuditRow>, sqlx::Error> {
    sqlx::query_as::<_, AuditRow>(
        "SELECT id, at, actor, action, target, detail, ip_hash FROM audit_log \
         WHERE account_id = $1 AND ($2::uuid IS NULL OR id < $2) \
         ORDER BY id DESC LIMIT $3",
    )
    .bind(account_id)
    .bind(before)
    .bind(PAGE_SIZE)
    .fetch_all(pool)
    .await
}
