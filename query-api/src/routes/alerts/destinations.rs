//! `/api/admin/accounts/{id}/destinations[/{dest}]`: where notifications go. A webhook gets a
//! signing secret, shown once (sealed at rest with `WEBHOOK_SECRETS_KEY`); a Discord URL holds
//! its own token, so it is shown cut (`…abcd`) everywhere after it is given.

pub use super::destination_store::{create, delete, get_one, list, update};
use super::from_object;
use crate::auth::{AdminCaller, AdminRoutes};
use crate::error::ApiError;
use crate::extract::{ApiJson, ApiPath};
use crate::state::AppState;
use crate::team::Actor;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use shared::alerts::destinations::DestinationKind;
use shared::problem::Problem;
use utoipa::ToSchema;
use uuid::Uuid;

/// What kind of endpoint a destination is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = DestinationKind)]
pub enum Kind {
    /// An HTTPS (or HTTP) endpoint of yours, signed per the Standard Webhooks specification.
    Webhook,
    /// A Discord channel webhook (`https://discord.com/api/webhooks/...`), sent as an embed.
    Discord,
}

impl Kind {
    /// The stored form.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Webhook => "webhook",
            Kind::Discord => "discord",
        }
    }

    /// Reads the stored form.
    pub fn parse(text: &str) -> Option<Kind> {
        [Kind::Webhook, Kind::Discord]
            .into_iter()
            .find(|k| k.as_str() == text)
    }

    /// The same kind in `shared::alerts`.
    pub fn shared(self) -> DestinationKind {
        match self {
            Kind::Webhook => DestinationKind::Webhook,
            Kind::Discord => DestinationKind::Discord,
        }
    }
}

/// Body of `POST /api/admin/accounts/{account_id}/destinations`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewDestination {
    /// `webhook` or `discord`.
    pub kind: Kind,
    /// http(s), at most 2048 characters, no user name or password; loopback, private and
    /// link-local addresses are refused (422 `forbidden_address`) unless the operator allows
    /// them (`WEBHOOK_ALLOW_NETWORKS`). Discord: `https://discord.com/api/webhooks/...`.
    #[schema(
        example = "https://hooks.example.com/warden",
        min_length = 1,
        max_length = 2048
    )]
    pub url: String,
    /// A label for people, 1..=100 characters (default: the URL's host).
    #[serde(default)]
    #[schema(min_length = 1, max_length = 100, pattern = "^[^\\x00]*$")]
    pub name: Option<String>,
}

/// Body of `PATCH /api/admin/accounts/{account_id}/destinations/{destination_id}`: the fields
/// to change.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DestinationUpdate {
    /// A new label, 1..=100 characters.
    #[serde(default)]
    #[schema(min_length = 1, max_length = 100, pattern = "^[^\\x00]*$")]
    pub name: Option<String>,
    /// A new URL (the rules of a new destination's).
    #[serde(default)]
    #[schema(min_length = 1, max_length = 2048)]
    pub url: Option<String>,
    /// `false` pauses deliveries (they wait); `true` resumes them, also after the notifier
    /// disabled a destination that kept failing.
    #[serde(default)]
    pub enabled: Option<bool>,
}

/// A destination, as listed.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Destination {
    /// Its id.
    pub id: Uuid,
    /// `webhook` or `discord`.
    pub kind: Kind,
    /// Its label.
    pub name: String,
    /// The URL (a Discord URL with its token cut).
    pub url: String,
    /// Whether deliveries are sent (disabled ones wait).
    pub enabled: bool,
    /// When it was disabled, by a person or by the notifier.
    pub disabled_at: Option<DateTime<Utc>>,
    /// Why it was disabled.
    pub disabled_reason: Option<String>,
    /// Start of the current run of failed attempts; null after a success.
    pub failing_since: Option<DateTime<Utc>>,
    /// The last delivery it accepted.
    pub last_success_at: Option<DateTime<Utc>>,
    /// Until when the previous secret still signs too (after a rotation).
    pub previous_secret_expires_at: Option<DateTime<Utc>>,
    /// When it was added.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
}

/// A destination just added: with its signing secret (webhooks), shown only now.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CreatedDestination {
    /// The destination.
    #[serde(flatten)]
    pub destination: Destination,
    /// `whsec_...`: verify `webhook-signature` with it (Standard Webhooks). Webhooks only;
    /// never shown again (rotate to get a new one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
}

/// An account's destinations.
#[derive(Debug, Serialize, ToSchema)]
pub struct DestinationList {
    /// Oldest first.
    pub items: Vec<Destination>,
}

/// The routes of this resource.
pub fn router() -> AdminRoutes {
    Router::new()
        .route(
            "/api/admin/accounts/{account_id}/destinations",
            get(list_destinations).post(create_destination),
        )
        .route(
            "/api/admin/accounts/{account_id}/destinations/{destination_id}",
            get(get_destination)
                .patch(update_destination)
                .delete(delete_destination),
        )
}

/// Add a destination. A webhook's signing `secret` is in this response only.
#[utoipa::path(post, path = "/api/admin/accounts/{account_id}/destinations", tag = "admin",
    security(("admin_key" = [])),
    params(("account_id" = Uuid, Path, description = "The account")),
    request_body = NewDestination,
    responses(
        (status = 201, description = "Added; `secret` (webhooks) is shown only now", body = CreatedDestination),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not the admin key", body = Problem),
        (status = 404, description = "Unknown account", body = Problem),
        (status = 422, description = "Invalid URL or name; `forbidden_address` for an address the network policy refuses", body = Problem),
        (status = 503, description = "`alerts_not_configured`: no WEBHOOK_SECRETS_KEY for a webhook's secret", body = Problem),
    ))]
pub async fn create_destination(
    _admin: AdminCaller,
    State(state): State<AppState>,
    ApiPath(account_id): ApiPath<Uuid>,
    ApiJson(body): ApiJson<Value>,
) -> Result<(StatusCode, Json<CreatedDestination>), ApiError> {
    let body: NewDestination = from_object(body)?;
    let created = create(&state, account_id, &body, &Actor::admin_key()).await?;
    tracing::info!(%account_id, destination_id = %created.destination.id, kind = body.kind.as_str(), "alert destination added");
    Ok((StatusCode::CREATED, Json(created)))
}

/// List an account's destinations with their health (never their secrets).
#[utoipa::path(get, path = "/api/admin/accounts/{account_id}/destinations", tag = "admin",
    security(("admin_key" = [])),
    params(("account_id" = Uuid, Path, description = "The account")),
    responses(
        (status = 200, description = "The destinations", body = DestinationList),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not the admin key", body = Problem),
        (status = 404, description = "Unknown account", body = Problem),
    ))]
pub async fn list_destinations(
    _admin: AdminCaller,
    State(state): State<AppState>,
    ApiPath(account_id): ApiPath<Uuid>,
) -> Result<Json<DestinationList>, ApiError> {
    state.key_store.require_account(account_id).await?;
    let items = list(&state.pool, account_id).await?;
    Ok(Json(DestinationList { items }))
}

/// Read one destination.
#[utoipa::path(get, path = "/api/admin/accounts/{account_id}/destinations/{destination_id}", tag = "admin",
    security(("admin_key" = [])),
    params(
        ("account_id" = Uuid, Path, description = "The account"),
        ("destination_id" = Uuid, Path, description = "The destination"),
    ),
    responses(
        (status = 200, description = "The destination", body = Destination),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not the admin key", body = Problem),
        (status = 404, description = "Unknown account or destination", body = Problem),
    ))]
pub async fn get_destination(
    _admin: AdminCaller,
    State(state): State<AppState>,
    ApiPath((account_id, id)): ApiPath<(Uuid, Uuid)>,
) -> Result<Json<Destination>, ApiError> {
    Ok(Json(get_one(&state.pool, account_id, id).await?))
}

/// Rename a destination, change its URL, or disable or enable it.
#[utoipa::path(patch, path = "/api/admin/accounts/{account_id}/destinations/{destination_id}", tag = "admin",
    security(("admin_key" = [])),
    params(
        ("account_id" = Uuid, Path, description = "The account"),
        ("destination_id" = Uuid, Path, description = "The destination"),
    ),
    request_body = DestinationUpdate,
    responses(
        (status = 200, description = "The destination as changed", body = Destination),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not the admin key", body = Problem),
        (status = 404, description = "Unknown account or destination", body = Problem),
        (status = 409, description = "`kind_mismatch`: a Discord destination given another URL", body = Problem),
        (status = 422, description = "Invalid URL or name; `forbidden_address` for an address the network policy refuses", body = Problem),
    ))]
pub async fn update_destination(
    _admin: AdminCaller,
    State(state): State<AppState>,
    ApiPath((account_id, id)): ApiPath<(Uuid, Uuid)>,
    ApiJson(body): ApiJson<Value>,
) -> Result<Json<Destination>, ApiError> {
    let body: DestinationUpdate = from_object(body)?;
    let destination = update(&state, account_id, id, &body, &Actor::admin_key()).await?;
    Ok(Json(destination))
}

/// Delete a destination, its deliveries, and its place in every rule.
#[utoipa::path(delete, path = "/api/admin/accounts/{account_id}/destinations/{destination_id}", tag = "admin",
    security(("admin_key" = [])),
    params(
        ("account_id" = Uuid, Path, description = "The account"),
        ("destination_id" = Uuid, Path, description = "The destination"),
    ),
    responses(
        (status = 204, description = "Deleted"),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not the admin key", body = Problem),
        (status = 404, description = "Unknown account or destination", body = Problem),
    ))]
pub async fn delete_destination(
    _admin: AdminCaller,
    State(state): State<AppState>,
    ApiPath((account_id, id)): ApiPath<(Uuid, Uuid)>,
) -> Result<StatusCode, ApiError> {
    delete(&state.pool, account_id, id, &Actor::admin_key()).await?;
    Ok(StatusCode::NO_CONTENT)
}
