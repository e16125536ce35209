//! The SQL of destinations, shared by the admin API (`destinations.rs`) and the `/alerts`
//! pages: every read and change is scoped to one account (another account's id is a 404), and
//! every change is written to the audit log in its own transaction.

use super::destination_urls::{checked_url, new_url, shown_url};
use super::destinations::{
    CreatedDestination, Destination, DestinationUpdate, Kind, NewDestination,
};
use super::{not_configured, not_found, record};
use crate::error::ApiError;
use crate::state::AppState;
use crate::team::Actor;
use chrono::{DateTime, Utc};
use serde_json::json;
use shared::alerts::destinations::default_name;
use shared::alerts::signing::generate_secret;
use shared::validation::FieldErrors;
use sqlx::PgPool;
use uuid::Uuid;

#[derive(sqlx::FromRow)]
struct Row {
    id: Uuid,
    kind: String,
    name: String,
    url: String,
    enabled: bool,
    disabled_at: Option<DateTime<Utc>>,
    disabled_reason: Option<String>,
    failing_since: Option<DateTime<Utc>>,
    last_success_at: Option<DateTime<Utc>>,
    previous_secret_expires_at: Option<DateTime<Utc>>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

const COLUMNS: &str = "id, kind, name, url, enabled, disabled_at, disabled_reason, failing_since, \
    last_success_at, previous_secret_expires_at, created_at, updated_at";

/// A URL's host, for the audit log: a URL's path or query may hold a credential (a Discord
/// token, a chat service's webhook key), so the log never holds the whole URL.
fn host(url: &str) -> Option<String> {
    url::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
}

impl Row {
    fn view(self) -> Result<Destination, ApiError> {
        let kind = Kind::parse(&self.kind).ok_or_else(|| {
            ApiError::Internal(anyhow::anyhow!("stored destination kind {:?}", self.kind))
        })?;
        Ok(Destination {
            url: shown_url(kind, &self.url),
            id: self.id,
            kind,
            name: self.name,
            enabled: self.enabled,
            disabled_at: self.disabled_at,
            disabled_reason: self.disabled_reason,
            failing_since: self.failing_since,
            last_success_at: self.last_success_at,
            previous_secret_expires_at: self.previous_secret_expires_at,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

fn check_name(name: Option<&str>) -> Result<(), ApiError> {
    let mut errors = FieldErrors::new();
    errors.text("name", name, 1, 100);
    errors.into_result().map_err(ApiError::invalid)
}

/// An account's destinations, oldest first.
pub async fn list(pool: &PgPool, account_id: Uuid) -> Result<Vec<Destination>, ApiError> {
    sqlx::query_as::<_, Row>(&format!(
        "SELECT {COLUMNS} FROM alert_destinations WHERE account_id = $1 ORDER BY created_at, id"
    ))
    .bind(account_id)
    .fetch_all(pool)
    .await?
    .into_iter()
    .map(Row::view)
    .collect()
}

/// One of the account's destinations (404 for any other id).
pub async fn get_one(pool: &PgPool, account_id: Uuid, id: Uuid) -> Result<Destination, ApiError> {
    sqlx::query_as::<_, Row>(&format!(
        "SELECT {COLUMNS} FROM alert_destinations WHERE account_id = $1 AND id = $2"
    ))
    .bind(account_id)
    .bind(id)
    .fetch_optional(pool)
    .await?
    .ok_or_else(|| not_found("destination", id))?
    .view()
}

/// Adds a destination (the admin API and the `/alerts` page).
pub async fn create(
    state: &AppState,
    account_id: Uuid,
    body: &NewDestination,
    actor: &Actor,
) -> Result<CreatedDestination, ApiError> {
    // An unknown account first: whatever the body, it names nothing here.
    state.key_store.require_account(account_id).await?;
    check_name(body.name.as_deref())?;
    let url = checked_url(state, body.kind, &body.url)?;
    let id = Uuid::now_v7();
    let secret = match body.kind {
        Kind::Discord => None,
        Kind::Webhook => Some(generate_secret()),
    };
    let sealed = match &secret {
        None => None,
        Some(secret) => {
            let key = state
                .alerts
                .sealing_key
                .as_ref()
                .ok_or_else(not_configured)?;
            Some(key.seal(id.as_bytes(), secret))
        }
    };
    let name = match &body.name {
        Some(name) => name.clone(),
        None => {
            url::Url::parse(&url).map_or_else(|_| "destination".to_owned(), |u| default_name(&u))
        }
    };
    let mut tx = state.pool.begin().await?;
    let row = sqlx::query_as::<_, Row>(&format!(
        "INSERT INTO alert_destinations (id, account_id, kind, name, url, secret_sealed) \
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING {COLUMNS}"
    ))
    .bind(id)
    .bind(account_id)
    .bind(body.kind.as_str())
    .bind(&name)
    .bind(&url)
    .bind(sealed)
    .fetch_one(&mut *tx)
    .await?;
    let destination = row.view()?;
    let detail = json!({ "kind": body.kind.as_str(), "name": name, "host": host(&url) });
    record(
        &mut tx,
        account_id,
        actor,
        "alert_destination_created",
        id,
        detail,
    )
    .await?;
    tx.commit().await?;
    Ok(CreatedDestination {
        destination,
        secret,
    })
}

/// Changes a destination's name, URL or state. Enabling one clears its failure run, so a
/// destination the notifier disabled gets a fresh start.
pub async fn update(
    state: &AppState,
    account_id: Uuid,
    id: Uuid,
    body: &DestinationUpdate,
    actor: &Actor,
) -> Result<Destination, ApiError> {
    let current = get_one(&state.pool, account_id, id).await?;
    check_name(body.name.as_deref())?;
    let url = match &body.url {
        Some(url) => Some(new_url(state, current.kind, url)?),
        None => None,
    };
    let mut tx = state.pool.begin().await?;
    let row = sqlx::query_as::<_, Row>(&format!(
        "UPDATE alert_destinations SET name = COALESCE($3, name), url = COALESCE($4, url), \
           enabled = COALESCE($5, enabled), \
           disabled_at = CASE WHEN $5 IS NULL THEN disabled_at WHEN $5 THEN NULL \
             WHEN enabled THEN now() ELSE disabled_at END, \
           disabled_reason = CASE WHEN $5 IS NULL THEN disabled_reason WHEN $5 THEN NULL \
             WHEN enabled THEN $6 ELSE disabled_reason END, \
           failing_since = CASE WHEN $5 AND NOT enabled THEN NULL ELSE failing_since END, \
           updated_at = now() \
         WHERE account_id = $1 AND id = $2 RETURNING {COLUMNS}"
    ))
    .bind(account_id)
    .bind(id)
    .bind(body.name.as_deref())
    .bind(url.as_deref())
    .bind(body.enabled)
    .bind(format!("disabled by {}", actor.label()))
    .fetch_optional(&mut *tx)
    .await?
    .ok_or_else(|| not_found("destination", id))?;
    let destination = row.view()?;
    let detail = json!({
        "name": body.name, "host": url.as_deref().map(host), "enabled": body.enabled,
    });
    record(
        &mut tx,
        account_id,
        actor,
        "alert_destination_changed",
        id,
        detail,
    )
    .await?;
    tx.commit().await?;
    Ok(destination)
}

/// Deletes a destination with its pending deliveries and its place in every rule.
pub async fn delete(
    pool: &PgPool,
    account_id: Uuid,
    id: Uuid,
    actor: &Actor,
) -> Result<(), ApiError> {
    let mut tx = pool.begin().await?;
    let name: Option<String> = sqlx::query_scalar(
        "DELETE FROM alert_destinations WHERE account_id = $1 AND id = $2 RETURNING name",
    )
    .bind(account_id)
    .bind(id)
    .fetch_optional(&mut *tx)
    .await?;
    let name = name.ok_or_else(|| not_found("destination", id))?;
    record(
        &mut tx,
        account_id,
        actor,
        "alert_destination_deleted",
        id,
        json!({ "name": name }),
    )
    .await?;
    tx.commit().await?;
    Ok(())
}
