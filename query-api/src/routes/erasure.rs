//! `POST /api/admin/accounts/{account_id}/players/{uuid}/erase` (admin key) and, through
//! [`erase`], the dashboard's erase action on the player page (owners and admins): a player's
//! erasure.
//!
//! The order is what makes it hold:
//! 1. the player's data key is destroyed ([`Keyring::destroy_player`]): from this moment every
//!    sealed field of theirs, in the log and in any replay of it, reads as erased;
//! 2. an `erasure` record is appended to the event log (durable once acked), so every read
//!    model is scrubbed in order with everything else, and a rebuild does it again;
//! 3. the answer waits (at most [`APPLIED_WITHIN`]) for the projector to have applied it
//!    (`erased_players`): `200 {"status":"erased"}`, or `202 {"status":"pending"}` when the
//!    projector is behind (it will be applied; poll the player or ask again).
//!
//! Erasing twice is fine: the key is already gone, the second record scrubs nothing new, and
//! the first erasure's time stays on record. Audited as `player_erased` with the player's
//! UUID only (the audit log never holds what was erased).
//!
//! [`Keyring::destroy_player`]: shared::privacy::Keyring::destroy_player

use crate::auth::{AdminCaller, AdminRoutes};
use crate::error::ApiError;
use crate::extract::ApiPath;
use crate::queries::erasure::{erased_at, known_or_erased};
use crate::routes::history::player_not_found;
use crate::routes::privacy::keyring_error;
use crate::state::AppState;
use crate::team::audit::{self, AuditEntry};
use crate::team::{Actor, Who};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::json;
use shared::envelope::{LogMessage, Logged};
use shared::problem::Problem;
use shared::records::{ERASED_BY_ADMIN, PlayerErasure};
use std::time::Duration;
use utoipa::ToSchema;
use uuid::Uuid;

/// How long an erase request waits for the projector to apply the erasure.
pub const APPLIED_WITHIN: Duration = Duration::from_secs(5);
/// Seconds a client is told to wait when the event log or the key store did not answer.
const RETRY_AFTER_SECONDS: u64 = 5;

/// Whether the read models show the erasure yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErasureStatus {
    /// Applied: no read returns the player's personal data.
    Erased,
    /// Logged and the key destroyed, but the projector has not applied it yet.
    Pending,
}

/// The answer to an erase request.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ErasureOutcome {
    /// `erased` (200) or `pending` (202).
    pub status: ErasureStatus,
    /// The account.
    pub account_id: Uuid,
    /// The player erased.
    pub player_uuid: Uuid,
    /// When the player was (first) erased, once applied.
    pub erased_at: Option<DateTime<Utc>>,
}

impl IntoResponse for ErasureOutcome {
    fn into_response(self) -> Response {
        let status = match self.status {
            ErasureStatus::Erased => StatusCode::OK,
            ErasureStatus::Pending => StatusCode::ACCEPTED,
        };
        (status, Json(self)).into_response()
    }
}

/// The routes of this resource.
pub fn router() -> AdminRoutes {
    Router::new().route(
        "/api/admin/accounts/{account_id}/players/{uuid}/erase",
        post(erase_player),
    )
}

/// Erase a player: destroy their data key, log the erasure, and wait (up to 5 s) for the read
/// models to drop or blank their personal fields. What remains (UUIDs, times, counts,
/// playtime, punishment history without text) is listed in `docs/privacy.md`, "Erase a player".
#[utoipa::path(post, path = "/api/admin/accounts/{account_id}/players/{uuid}/erase",
    tag = "admin",
    security(("admin_key" = [])),
    params(
        ("account_id" = Uuid, Path, description = "The account"),
        ("uuid" = Uuid, Path, description = "The player's UUID"),
    ),
    responses(
        (status = 200, description = "Erased: no read returns the player's personal data",
            body = ErasureOutcome),
        (status = 202, description = "Erased in the log (the key is destroyed); the read \
            models apply it shortly", body = ErasureOutcome),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not the admin key", body = Problem),
        (status = 404, description = "Unknown account, a path segment that is not a UUID, or a \
            player the account has never seen", body = Problem),
        (status = 503, description = "The privacy key store or the event log is unavailable; \
            nothing was logged; try again", body = Problem),
    ))]
pub async fn erase_player(
    _admin: AdminCaller,
    State(state): State<AppState>,
    ApiPath((account_id, player)): ApiPath<(Uuid, Uuid)>,
) -> Result<ErasureOutcome, ApiError> {
    state.key_store.require_account(account_id).await?;
    erase(&state, account_id, player, &Actor::admin_key(), "admin_api").await
}

/// Erases `player` of `account` for `actor` (`via` says which door, for the audit log); the
/// account is known to exist. A player the account has never seen (nor erased) is a 404.
pub async fn erase(
    state: &AppState,
    account: Uuid,
    player: Uuid,
    actor: &Actor,
    via: &str,
) -> Result<ErasureOutcome, ApiError> {
    if !known_or_erased(&state.pool, account, player).await? {
        return Err(player_not_found(player));
    }
    state
        .keyring
        .destroy_player(account, player)
        .await
        .map_err(keyring_error)?;

    let by = match &actor.who {
        Who::Member { id, .. } => id.to_string(),
        Who::Operator(_) | Who::Visitor(_) => ERASED_BY_ADMIN.to_owned(),
    };
    let now = Utc::now();
    let id = Uuid::now_v7();
    let record = PlayerErasure {
        player_uuid: player,
        erased_at: now,
        by,
    };
    let message = LogMessage::new(
        account,
        now,
        PlayerErasure::into_batch(vec![Logged { id, record }]),
    );
    let subject = state
        .subjects
        .for_records(account, PlayerErasure::KIND, None);
    // Nothing to seal: the record holds UUIDs and a time only.
    if let Err(error) = state
        .publisher
        .append(subject, Some(id.to_string()), message.encode())
        .await
    {
        tracing::warn!(%error, "an erasure could not be appended to the event log");
        // The key is destroyed already (what the log holds is unreadable); asking again
        // logs the record that scrubs the read models.
        return Err(ApiError::Refused(Box::new(Problem::unavailable(
            "the player's key is destroyed, but the event log did not take the erasure \
             record, so the read models are not scrubbed yet: send the same request again",
            RETRY_AFTER_SECONDS,
        ))));
    }

    let erased_at = applied(state, account, player).await?;
    let status = match erased_at {
        Some(_) => ErasureStatus::Erased,
        None => ErasureStatus::Pending,
    };
    // Durable from here on; the audit row follows the change and names the player by UUID.
    audit::record(
        &state.pool,
        AuditEntry {
            account_id: Some(account),
            actor,
            action: "player_erased",
            target: Some(player.to_string()),
            detail: json!({ "via": via, "erasure_id": id, "status": status }),
        },
    )
    .await?;
    tracing::info!(account_id = %account, player_uuid = %player, ?status, "player erasure logged");
    Ok(ErasureOutcome {
        status,
        account_id: account,
        player_uuid: player,
        erased_at,
    })
}

/// Polls `erased_players` (the primary: a replica may lag) until the projector applied the
/// erasure, at most [`APPLIED_WITHIN`].
async fn applied(
    state: &AppState,
    account: Uuid,
    player: Uuid,
) -> Result<Option<DateTime<Utc>>, ApiError> {
    let deadline = tokio::time::Instant::now() + APPLIED_WITHIN;
    loop {
        if let Some(at) = erased_at(&state.pool, account, player).await? {
            return Ok(Some(at));
        }
        if tokio::time::Instant::now() >= deadline {
            return Ok(None);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
