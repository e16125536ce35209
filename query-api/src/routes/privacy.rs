//! `/api/admin/accounts/{id}/privacy`: an account's privacy policy: how many days
//! each kind of data is kept, and which custom-event properties stay in clear in the event log
//! (every other one is sealed with the player's key).
//!
//! The policy lives in the privacy accounts bucket ([`Keyring::set_policy`]), where ingest
//! (which seals the properties) and the projector (whose sweeper applies retention)
//! read it; there is no copy in PostgreSQL. The settings page saves through
//! [`store_policy`] too, so both write the same audit row.
//!
//! [`Keyring::set_policy`]: shared::privacy::Keyring::set_policy

use crate::auth::{AdminCaller, AdminRoutes};
use crate::error::ApiError;
use crate::extract::{ApiJson, ApiPath};
use crate::routes::alerts::from_object;
use crate::state::AppState;
use crate::team::Actor;
use crate::team::audit::{self, AuditEntry};
use axum::extract::State;
use axum::http::HeaderValue;
use axum::http::StatusCode;
use axum::http::header::RETRY_AFTER;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};
use shared::privacy::{KeyringError, PrivacyPolicy, RetentionKind};
use shared::problem::Problem;
use uuid::Uuid;

/// The routes of this resource.
pub fn router() -> AdminRoutes {
    Router::new().route(
        "/api/admin/accounts/{account_id}/privacy",
        get(get_privacy).put(put_privacy),
    )
}

/// Read an account's privacy policy (everything kept forever until one is set).
#[utoipa::path(get, path = "/api/admin/accounts/{account_id}/privacy", tag = "admin",
    security(("admin_key" = [])),
    params(("account_id" = Uuid, Path, description = "The account")),
    responses(
        (status = 200, description = "The policy in force", body = PrivacyPolicy),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not the admin key", body = Problem),
        (status = 404, description = "Unknown account", body = Problem),
        (status = 503, description = "The privacy key store is unreachable; try again", body = Problem),
    ))]
pub async fn get_privacy(
    _admin: AdminCaller,
    State(state): State<AppState>,
    ApiPath(account_id): ApiPath<Uuid>,
) -> Result<Json<PrivacyPolicy>, ApiError> {
    Ok(Json(load_policy(&state, account_id).await?))
}

/// Replace an account's privacy policy. Shorter retention takes effect at the projector's next
/// retention sweep (`RETENTION_SWEEP_SECS`): rows past it leave the read models and the
/// personal fields of the log's older days can no longer be read, by anyone, ever.
#[utoipa::path(put, path = "/api/admin/accounts/{account_id}/privacy", tag = "admin",
    security(("admin_key" = [])),
    params(("account_id" = Uuid, Path, description = "The account")),
    request_body = PrivacyPolicy,
    responses(
        (status = 200, description = "The policy now in force", body = PrivacyPolicy),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not the admin key", body = Problem),
        (status = 404, description = "Unknown account", body = Problem),
        (status = 422, description = "A day count or property name breaks its rule", body = Problem),
        (status = 503, description = "The privacy key store is unreachable; try again", body = Problem),
    ))]
pub async fn put_privacy(
    _admin: AdminCaller,
    State(state): State<AppState>,
    ApiPath(account_id): ApiPath<Uuid>,
    ApiJson(body): ApiJson<Value>,
) -> Result<Json<PrivacyPolicy>, ApiError> {
    // Through a Value: serde would also read the struct from an array (`[]` = keep
    // everything forever), which the reference does not allow.
    if body.get("retention").is_some_and(|r| !r.is_object()) {
        return Err(ApiError::unreadable(Problem::malformed_json(
            "`retention` must be a JSON object of days per kind",
        )));
    }
    let policy: PrivacyPolicy = from_object(body)?;
    store_policy(&state, account_id, &Actor::admin_key(), &policy).await?;
    Ok(Json(policy.normalized()))
}

/// The policy in force for `account_id`; an unknown account is a 404.
pub async fn load_policy(state: &AppState, account_id: Uuid) -> Result<PrivacyPolicy, ApiError> {
    state.key_store.require_account(account_id).await?;
    let policy = state
        .keyring
        .policy(account_id)
        .await
        .map_err(keyring_error)?;
    // A policy stored in the old shape may still hold its personal list.
    Ok((*policy).clone().normalized())
}

/// Checks and stores `policy` as the account's (the admin API and the settings page), and
/// writes the audit row naming what changed; returns those changes, one line each (empty
/// when nothing did). The old `personal_properties` list is checked, then dropped
/// ([`PrivacyPolicy::normalized`]).
pub async fn store_policy(
    state: &AppState,
    account_id: Uuid,
    actor: &Actor,
    policy: &PrivacyPolicy,
) -> Result<Vec<String>, ApiError> {
    policy.validate().map_err(ApiError::invalid)?;
    let policy = &policy.clone().normalized();
    let before = load_policy(state, account_id).await?;
    state
        .keyring
        .set_policy(account_id, policy)
        .await
        .map_err(keyring_error)?;
    let changes = changes(&before, policy);
    // After the change: the log never claims a change the bucket refused.
    let entry = AuditEntry {
        account_id: Some(account_id),
        actor,
        action: "privacy_policy_changed",
        target: Some("privacy".to_owned()),
        detail: json!({ "policy": policy, "changes": changes }),
    };
    audit::record(&state.pool, entry).await?;
    tracing::info!(%account_id, changes = changes.len(), "privacy policy changed");
    Ok(changes)
}

/// What changed between two policies, for people ("Chat: forever → 90 days").
pub fn changes(before: &PrivacyPolicy, after: &PrivacyPolicy) -> Vec<String> {
    let mut lines = Vec::new();
    for kind in RetentionKind::ALL {
        let (old, new) = (before.retention.days(kind), after.retention.days(kind));
        if old != new {
            lines.push(format!(
                "{}: {} → {}",
                kind_label(kind),
                days_text(old),
                days_text(new)
            ));
        }
    }
    if before.clear_properties != after.clear_properties {
        let list = |names: &[String]| {
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        };
        lines.push(format!(
            "Custom-event properties kept in clear: {} → {}",
            list(&before.clear_properties),
            list(&after.clear_properties)
        ));
    }
    lines
}

/// A kind's name on the settings page.
pub fn kind_label(kind: RetentionKind) -> &'static str {
    match kind {
        RetentionKind::Chat => "Chat messages and commands",
        RetentionKind::IpHashes => "Sessions' IP hashes",
        RetentionKind::Sessions => "Sessions (joins and quits)",
        RetentionKind::CustomEvents => "Custom events",
        RetentionKind::AnticheatFlags => "Anti-cheat flags",
    }
}

fn days_text(days: Option<u32>) -> String {
    match days {
        None => "forever".to_owned(),
        Some(1) => "1 day".to_owned(),
        Some(n) => format!("{n} days"),
    }
}

/// 503 `privacy_unavailable` (try again) for an unreachable bucket; a key that the master key
/// does not open is the operator's to fix (500, logged).
pub(crate) fn keyring_error(error: KeyringError) -> ApiError {
    match error {
        KeyringError::Unavailable(_) => ApiError::Refused(Box::new(
            Problem::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "privacy_unavailable",
                "The privacy key store is unavailable",
                "the privacy settings could not be reached; try again in a few seconds",
            )
            .with_header(RETRY_AFTER, HeaderValue::from_static("5")),
        )),
        other => ApiError::Internal(other.into()),
    }
}

/// The rules utoipa's attributes cannot spell: each property name's length, no NUL, no name
/// twice (in either list).
pub fn refine_document(doc: &mut Value) {
    for list in ["clear_properties", "personal_properties"] {
        shared::openapi::refine(
            doc,
            "PrivacyPolicy",
            Some(list),
            json!({
                "uniqueItems": true,
                "items": {"type": "string", "minLength": 1, "maxLength": 64, "pattern": "^[^\\x00]*$"},
            }),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_name_each_field_that_moved() {
        let before = PrivacyPolicy::default();
        let mut after = before.clone();
        after.retention.chat = Some(90);
        after.retention.ip_hashes = Some(1);
        after.clear_properties = vec!["item".into(), "price".into()];
        assert_eq!(
            changes(&before, &after),
            [
                "Chat messages and commands: forever → 90 days",
                "Sessions' IP hashes: forever → 1 day",
                "Custom-event properties kept in clear: none → item, price",
            ]
        );
        assert!(changes(&after, &after).is_empty());
    }
}
