//! `POST .../destinations/{dest}/rotate-secret` and `.../test`: a new signing secret (the old
//! one keeps signing for 24 hours, so receivers can switch without dropping messages), and a
//! test event queued like any notification.

use super::destinations::{Kind, get_one};
use super::{not_configured, record, wake_workers};
use crate::auth::{AdminCaller, AdminRoutes};
use crate::error::ApiError;
use crate::extract::ApiPath;
use crate::state::AppState;
use crate::team::Actor;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::json;
use shared::alerts::signing::generate_secret;
use shared::problem::Problem;
use utoipa::ToSchema;
use uuid::Uuid;

/// How long the previous secret keeps signing after a rotation.
pub const PREVIOUS_SECRET_HOURS: i32 = 24;

/// A rotated secret, shown only now.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RotatedSecret {
    /// The new `whsec_...` secret.
    pub secret: String,
    /// Until when messages also carry a signature by the previous secret.
    pub previous_expires_at: DateTime<Utc>,
}

/// A delivery just queued.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct QueuedDelivery {
    /// The delivery (its `webhook-id` is `msg_` + this id without dashes).
    pub delivery_id: Uuid,
}

/// Replaces a webhook's signing secret (the admin API and the destination page).
pub async fn rotate(
    state: &AppState,
    account_id: Uuid,
    id: Uuid,
    actor: &Actor,
) -> Result<RotatedSecret, ApiError> {
    let destination = get_one(&state.pool, account_id, id).await?;
    if destination.kind != Kind::Webhook {
        return Err(ApiError::Refused(Box::new(Problem::new(
            StatusCode::CONFLICT,
            "no_secret",
            "Not a webhook",
            "only webhook destinations have a signing secret; a Discord URL carries its own token",
        ))));
    }
    let key = state
        .alerts
        .sealing_key
        .as_ref()
        .ok_or_else(not_configured)?;
    let secret = generate_secret();
    let sealed = key.seal(id.as_bytes(), &secret);
    let mut tx = state.pool.begin().await?;
    let expires: Option<DateTime<Utc>> = sqlx::query_scalar(
        "UPDATE alert_destinations SET previous_secret_sealed = secret_sealed, \
           previous_secret_expires_at = now() + make_interval(hours => $4), \
           secret_sealed = $3, updated_at = now() \
         WHERE account_id = $1 AND id = $2 AND kind = 'webhook' \
         RETURNING previous_secret_expires_at",
    )
    .bind(account_id)
    .bind(id)
    .bind(sealed)
    .bind(PREVIOUS_SECRET_HOURS)
    .fetch_optional(&mut *tx)
    .await?
    .flatten();
    let previous_expires_at = expires.ok_or_else(|| super::not_found("destination", id))?;
    let detail = json!({ "previous_expires_at": previous_expires_at });
    record(
        &mut tx,
        account_id,
        actor,
        "alert_secret_rotated",
        id,
        detail,
    )
    .await?;
    tx.commit().await?;
    Ok(RotatedSecret {
        secret,
        previous_expires_at,
    })
}

/// Queues a `test` notification to the destination and wakes the workers.
pub async fn send_test(
    state: &AppState,
    account_id: Uuid,
    id: Uuid,
    actor: &Actor,
) -> Result<QueuedDelivery, ApiError> {
    get_one(&state.pool, account_id, id).await?;
    let delivery_id = Uuid::now_v7();
    let payload = json!({
        "rule_id": null,
        "rule_name": null,
        "account_id": account_id,
        "destination_id": id,
        "message": "A test event from Warden",
    });
    let mut tx = state.pool.begin().await?;
    sqlx::query(
        "INSERT INTO alert_deliveries (id, account_id, destination_id, event_type, payload, occurred_at) \
         VALUES ($1, $2, $3, 'test', $4, now())",
    )
    .bind(delivery_id)
    .bind(account_id)
    .bind(id)
    .bind(&payload)
    .execute(&mut *tx)
    .await?;
    let detail = json!({ "delivery_id": delivery_id });
    record(&mut tx, account_id, actor, "alert_test_sent", id, detail).await?;
    wake_workers(&mut tx).await?;
    tx.commit().await?;
    Ok(QueuedDelivery { delivery_id })
}

/// The routes of this resource.
pub fn router() -> AdminRoutes {
    Router::new()
        .route(
            "/api/admin/accounts/{account_id}/destinations/{destination_id}/rotate-secret",
            post(rotate_secret),
        )
        .route(
            "/api/admin/accounts/{account_id}/destinations/{destination_id}/test",
            post(test_event),
        )
}

/// Give a webhook a new signing secret. Until `previous_expires_at` (24 hours) every message
/// carries two signatures, one per secret.
#[utoipa::path(post, path = "/api/admin/accounts/{account_id}/destinations/{destination_id}/rotate-secret", tag = "admin",
    security(("admin_key" = [])),
    params(
        ("account_id" = Uuid, Path, description = "The account"),
        ("destination_id" = Uuid, Path, description = "The webhook destination"),
    ),
    responses(
        (status = 200, description = "The new secret, shown only now", body = RotatedSecret),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not the admin key", body = Problem),
        (status = 404, description = "Unknown account or destination", body = Problem),
        (status = 409, description = "`no_secret`: a Discord destination", body = Problem),
        (status = 503, description = "`alerts_not_configured`: no WEBHOOK_SECRETS_KEY", body = Problem),
    ))]
pub async fn rotate_secret(
    _admin: AdminCaller,
    State(state): State<AppState>,
    ApiPath((account_id, id)): ApiPath<(Uuid, Uuid)>,
) -> Result<Json<RotatedSecret>, ApiError> {
    let rotated = rotate(&state, account_id, id, &Actor::admin_key()).await?;
    tracing::info!(%account_id, destination_id = %id, "webhook secret rotated");
    Ok(Json(rotated))
}

/// Send a test event (`type: test`) to a destination. It is delivered and logged like any
/// notification (a disabled destination keeps it until it is enabled).
#[utoipa::path(post, path = "/api/admin/accounts/{account_id}/destinations/{destination_id}/test", tag = "admin",
    security(("admin_key" = [])),
    params(
        ("account_id" = Uuid, Path, description = "The account"),
        ("destination_id" = Uuid, Path, description = "The destination"),
    ),
    responses(
        (status = 202, description = "Queued", body = QueuedDelivery),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not the admin key", body = Problem),
        (status = 404, description = "Unknown account or destination", body = Problem),
    ))]
pub async fn test_event(
    _admin: AdminCaller,
    State(state): State<AppState>,
    ApiPath((account_id, id)): ApiPath<(Uuid, Uuid)>,
) -> Result<(StatusCode, Json<QueuedDelivery>), ApiError> {
    let queued = send_test(&state, account_id, id, &Actor::admin_key()).await?;
    Ok((StatusCode::ACCEPTED, Json(queued)))
}
