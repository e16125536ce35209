//! `/api/admin/accounts/{id}/settings`: staff groups and the plugin's sync interval.

use crate::auth::{AdminCaller, AdminRoutes};
use crate::error::ApiError;
use crate::extract::{ApiJson, ApiPath};
use crate::state::AppState;
use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use shared::problem::Problem;
use shared::validation::FieldErrors;
use sqlx::PgPool;
use utoipa::ToSchema;
use uuid::Uuid;

pub use shared::records::DEFAULT_STAFF_GROUPS;
/// The plugin's sync interval when an account has not chosen one.
pub const DEFAULT_SYNC_INTERVAL_SECONDS: i32 = 15;

/// An account's settings.
#[derive(Debug, Serialize, sqlx::FromRow, ToSchema)]
pub struct AccountSettings {
    /// The account.
    pub account_id: Uuid,
    /// Permission groups whose members count as staff.
    pub staff_groups: Vec<String>,
    /// Seconds between plugin syncs (heartbeats); a server is offline after 3 missed ones.
    pub sync_interval_seconds: i32,
    /// When they were last set; null while the defaults apply.
    pub updated_at: Option<DateTime<Utc>>,
}

impl AccountSettings {
    /// The settings in force for `account_id`: its stored row, or the defaults without one.
    pub async fn load(pool: &PgPool, account_id: Uuid) -> Result<AccountSettings, sqlx::Error> {
        let stored = sqlx::query_as::<_, AccountSettings>(
            "SELECT account_id, staff_groups, sync_interval_seconds, updated_at \
             FROM account_settings WHERE account_id = $1",
        )
        .bind(account_id)
        .fetch_optional(pool)
        .await?;
        Ok(stored.unwrap_or_else(|| AccountSettings {
            account_id,
            staff_groups: DEFAULT_STAFF_GROUPS
                .iter()
                .map(|g| (*g).to_owned())
                .collect(),
            sync_interval_seconds: DEFAULT_SYNC_INTERVAL_SECONDS,
            updated_at: None,
        }))
    }

    /// Seconds without a heartbeat after which a server counts as offline: 3 x the sync interval.
    pub fn offline_after_seconds(&self) -> f64 {
        3.0 * f64::from(self.sync_interval_seconds)
    }

    /// The staff groups, lower-cased, for case-insensitive matching.
    pub fn staff_groups_lowercase(&self) -> Vec<String> {
        self.staff_groups.iter().map(|g| g.to_lowercase()).collect()
    }
}

/// Body of `PUT /api/admin/accounts/{account_id}/settings` (replaces both settings).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SettingsUpdate {
    /// 0..=50 group names of 1..=64 characters each.
    #[schema(example = json!(["admin", "mod"]), max_items = 50)]
    pub staff_groups: Vec<String>,
    /// 1..=3600.
    #[schema(example = 15, minimum = 1, maximum = 3600)]
    #[serde(deserialize_with = "shared::whole_number::deserialize")]
    pub sync_interval_seconds: i64,
}

impl SettingsUpdate {
    /// The rules beyond the JSON shape.
    fn check(&self) -> Result<i32, ApiError> {
        let mut errors = FieldErrors::new();
        if self.staff_groups.len() > 50 {
            errors.push("staff_groups", "too_many", "at most 50 groups");
        }
        for (i, group) in self.staff_groups.iter().enumerate() {
            errors.text(&format!("staff_groups[{i}]"), Some(group), 1, 64);
        }
        let interval = i32::try_from(self.sync_interval_seconds)
            .ok()
            .filter(|s| (1..=3600).contains(s));
        if interval.is_none() {
            errors.push(
                "sync_interval_seconds",
                "out_of_range",
                "must be between 1 and 3600",
            );
        }
        errors.into_result().map_err(ApiError::invalid)?;
        Ok(interval.unwrap_or(DEFAULT_SYNC_INTERVAL_SECONDS))
    }
}

/// The routes of this resource.
pub fn router() -> AdminRoutes {
    Router::new().route(
        "/api/admin/accounts/{account_id}/settings",
        get(get_settings).put(put_settings),
    )
}

/// Read an account's settings (the defaults until they are set).
#[utoipa::path(get, path = "/api/admin/accounts/{account_id}/settings", tag = "admin",
    security(("admin_key" = [])),
    params(("account_id" = Uuid, Path, description = "The account")),
    responses(
        (status = 200, description = "The settings", body = AccountSettings),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not the admin key", body = Problem),
        (status = 404, description = "Unknown account", body = Problem),
    ))]
pub async fn get_settings(
    _admin: AdminCaller,
    State(state): State<AppState>,
    ApiPath(account_id): ApiPath<Uuid>,
) -> Result<Json<AccountSettings>, ApiError> {
    state.key_store.require_account(account_id).await?;
    Ok(Json(AccountSettings::load(&state.pool, account_id).await?))
}

/// Replace an account's settings.
#[utoipa::path(put, path = "/api/admin/accounts/{account_id}/settings", tag = "admin",
    security(("admin_key" = [])),
    params(("account_id" = Uuid, Path, description = "The account")),
    request_body = SettingsUpdate,
    responses(
        (status = 200, description = "The settings now in force", body = AccountSettings),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not the admin key", body = Problem),
        (status = 404, description = "Unknown account", body = Problem),
        (status = 422, description = "A setting breaks its rule", body = Problem),
    ))]
pub async fn put_settings(
    _admin: AdminCaller,
    State(state): State<AppState>,
    ApiPath(account_id): ApiPath<Uuid>,
    ApiJson(body): ApiJson<SettingsUpdate>,
) -> Result<Json<AccountSettings>, ApiError> {
    Ok(Json(
        AccountSettings::store(&state.pool, account_id, &body).await?,
    ))
}

impl AccountSettings {
    /// Checks and stores `update` as the account's settings (the admin API and the settings
    /// page); an unknown account is a 404.
    pub async fn store(
        executor: impl sqlx::PgExecutor<'_>,
        account_id: Uuid,
        update: &SettingsUpdate,
    ) -> Result<AccountSettings, ApiError> {
        let interval = update.check()?;
        // INSERT ... SELECT FROM accounts: an unknown account writes nothing and is a 404.
        sqlx::query_as::<_, AccountSettings>(
            "INSERT INTO account_settings (account_id, staff_groups, sync_interval_seconds, updated_at) \
             SELECT a.id, $2, $3, now() FROM accounts a WHERE a.id = $1 \
             ON CONFLICT (account_id) DO UPDATE SET staff_groups = EXCLUDED.staff_groups, \
               sync_interval_seconds = EXCLUDED.sync_interval_seconds, updated_at = EXCLUDED.updated_at \
             RETURNING account_id, staff_groups, sync_interval_seconds, updated_at",
        )
        .bind(account_id)
        .bind(&update.staff_groups)
        .bind(interval)
        .fetch_optional(executor)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("there is no account with id {account_id}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update(groups: Vec<String>, interval: i64) -> SettingsUpdate {
        SettingsUpdate {
            staff_groups: groups,
            sync_interval_seconds: interval,
        }
    }

    #[test]
    fn bounds_are_enforced() {
        assert_eq!(update(vec!["mod".into()], 15).check().ok(), Some(15));
        assert!(update(vec![], 1).check().is_ok());
        assert!(update(vec![], 3600).check().is_ok());
        assert!(update(vec![], 0).check().is_err());
        assert!(update(vec![], 3601).check().is_err());
        assert!(update(vec![String::new()], 15).check().is_err());
        assert!(update(vec!["x".repeat(65)], 15).check().is_err());
        assert!(update(vec!["g".into(); 51], 15).check().is_err());
        assert!(update(vec!["g".into(); 50], 15).check().is_ok());
    }
}
