//! `/api/admin/accounts/{id}/keys` and `/api/admin/keys/{id}`: issue, list, rotate, revoke.

use crate::auth::{AdminCaller, AdminRoutes};
use crate::error::ApiError;
use crate::extract::{ApiJson, ApiPath, OptionalApiJson};
use crate::key_store::{IssuedKey, KeySummary, check_new_key};
use crate::state::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{delete, get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use shared::problem::Problem;
use utoipa::ToSchema;
use uuid::Uuid;

/// Body of `POST /api/admin/accounts/{account_id}/keys`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewKey {
    /// `plugin` or `dashboard`.
    #[schema(example = "plugin", value_type = NewKeyKind)]
    pub kind: String,
    /// Free text (at most 200 characters), e.g. the server the key is for.
    #[serde(default)]
    #[schema(min_length = 0, max_length = 200, pattern = "^[^\\x00]*$")]
    pub label: Option<String>,
}

/// The kinds of key the admin API issues (the admin key is the operator's, never issued).
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[allow(dead_code)] // Only its schema is used: `kind` is checked by `check_new_key`.
pub enum NewKeyKind {
    /// For a game-server plugin.
    Plugin,
    /// For a dashboard.
    Dashboard,
}

/// Body of `POST /api/admin/keys/{key_id}/rotate` (optional: an empty body means no grace).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Rotation {
    /// How long the old key keeps working, 0..=604800 seconds (default 0: it stops now).
    #[serde(default, deserialize_with = "shared::whole_number::deserialize")]
    #[schema(minimum = 0, maximum = 604800)]
    pub grace_seconds: i64,
}

/// An account's keys.
#[derive(Debug, Serialize, ToSchema)]
pub struct KeyList {
    /// Oldest first; secrets are never listed.
    pub items: Vec<KeySummary>,
}

/// The routes of this resource.
pub fn router() -> AdminRoutes {
    Router::new()
        .route(
            "/api/admin/accounts/{account_id}/keys",
            get(list_keys).post(create_key),
        )
        .route("/api/admin/keys/{key_id}/rotate", post(rotate_key))
        .route("/api/admin/keys/{key_id}", delete(revoke_key))
}

/// Issue a plugin or dashboard key. The response is the only time the secret (`key`) is shown.
#[utoipa::path(post, path = "/api/admin/accounts/{account_id}/keys", tag = "admin",
    security(("admin_key" = [])),
    params(("account_id" = Uuid, Path, description = "The account")),
    request_body = NewKey,
    responses(
        (status = 201, description = "Issued; `key` is the secret", body = IssuedKey),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not the admin key", body = Problem),
        (status = 404, description = "Unknown account", body = Problem),
        (status = 422, description = "Invalid kind or label", body = Problem),
        (status = 503, description = "The key bucket is unavailable; nothing changed", body = Problem),
    ))]
pub async fn create_key(
    _admin: AdminCaller,
    State(state): State<AppState>,
    ApiPath(account_id): ApiPath<Uuid>,
    ApiJson(body): ApiJson<NewKey>,
) -> Result<(StatusCode, Json<IssuedKey>), ApiError> {
    let kind = check_new_key(&body.kind, body.label.as_deref())?;
    let issued = state
        .key_store
        .create_key(account_id, kind, body.label)
        .await?;
    tracing::info!(%account_id, key_id = %issued.id, kind = kind.as_str(), "key issued");
    Ok((StatusCode::CREATED, Json(issued)))
}

/// List an account's keys (never their secrets).
#[utoipa::path(get, path = "/api/admin/accounts/{account_id}/keys", tag = "admin",
    security(("admin_key" = [])),
    params(("account_id" = Uuid, Path, description = "The account")),
    responses(
        (status = 200, description = "The account's keys", body = KeyList),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not the admin key", body = Problem),
        (status = 404, description = "Unknown account", body = Problem),
    ))]
pub async fn list_keys(
    _admin: AdminCaller,
    State(state): State<AppState>,
    ApiPath(account_id): ApiPath<Uuid>,
) -> Result<Json<KeyList>, ApiError> {
    let items = state.key_store.list_keys(account_id).await?;
    Ok(Json(KeyList { items }))
}

/// Rotate a key: issue a replacement (same kind, account and label); the old secret keeps
/// working for `grace_seconds`, then is revoked. Rotating a key that is already revoked or
/// rotated is 409 `already_revoked`.
#[utoipa::path(post, path = "/api/admin/keys/{key_id}/rotate", tag = "admin",
    security(("admin_key" = [])),
    params(("key_id" = Uuid, Path, description = "The key to replace")),
    request_body(content = Option<Rotation>, description = "Optional: no body (and no Content-Type) means `grace_seconds` 0"),
    responses(
        (status = 201, description = "The new key; `key` is its secret", body = IssuedKey),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not the admin key", body = Problem),
        (status = 404, description = "Unknown key", body = Problem),
        (status = 409, description = "Already revoked or rotated", body = Problem),
        (status = 422, description = "grace_seconds out of range", body = Problem),
        (status = 503, description = "The key bucket is unavailable; nothing changed", body = Problem),
    ))]
pub async fn rotate_key(
    _admin: AdminCaller,
    State(state): State<AppState>,
    ApiPath(key_id): ApiPath<Uuid>,
    OptionalApiJson(body): OptionalApiJson<Rotation>,
) -> Result<(StatusCode, Json<IssuedKey>), ApiError> {
    let issued = state
        .key_store
        .rotate_key(key_id, body.grace_seconds)
        .await?;
    tracing::info!(old_key_id = %key_id, key_id = %issued.id, grace_seconds = body.grace_seconds, "key rotated");
    Ok((StatusCode::CREATED, Json(issued)))
}

/// Revoke a key now: it answers 401 everywhere within 2 seconds (in practice milliseconds).
/// A key in a rotation's grace period may be revoked early; one already revoked is 409
/// `already_revoked`.
#[utoipa::path(delete, path = "/api/admin/keys/{key_id}", tag = "admin",
    security(("admin_key" = [])),
    params(("key_id" = Uuid, Path, description = "The key to revoke")),
    responses(
        (status = 204, description = "Revoked"),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not the admin key", body = Problem),
        (status = 404, description = "Unknown key", body = Problem),
        (status = 409, description = "Already revoked", body = Problem),
        (status = 503, description = "The key bucket is unavailable; nothing changed", body = Problem),
    ))]
pub async fn revoke_key(
    _admin: AdminCaller,
    State(state): State<AppState>,
    ApiPath(key_id): ApiPath<Uuid>,
) -> Result<StatusCode, ApiError> {
    state.key_store.revoke_key(key_id).await?;
    tracing::info!(%key_id, "key revoked");
    Ok(StatusCode::NO_CONTENT)
}
