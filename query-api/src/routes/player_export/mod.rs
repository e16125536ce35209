//! `GET /api/admin/accounts/{account_id}/players/{uuid}/export` (admin key) and, through
//! [`export`], the dashboard's `/players/{uuid}/export` (owners and admins): everything the
//! read models hold about one player of one account, as one JSON document (an access
//! request), streamed as it is read ([`stream`]).
//!
//! The document is [`PlayerExport`]: a header (`account_id`, `player_uuid`, `exported_at`) and
//! one array per section, each oldest first, each a read model's rows as stored ([`rows`]).
//! An erased player exports what erasure left (the aggregates, blanked fields); what retention
//! removed is absent.
//!
//! Left out on purpose: other players (the alts sharing an IP hash are theirs, not this
//! player's), the alert machinery's short-lived copies of flags (`alert_recent_flags`, pruned
//! within the rules' windows, duplicates of `anticheat_flags`) and its delivery outbox, rank
//! changes the player made as staff to others (kept only inside timeline properties, with no
//! index to find them), and the audit log (what staff did, not data about the player).
//!
//! Every export is audited (`player_exported`, the player's UUID as target, no personal data)
//! before its first byte, so one that fails half-way is still on record.

pub mod rows;
mod stream;

pub use stream::STALL_LIMIT;

use crate::auth::{AdminCaller, AdminRoutes};
use crate::error::ApiError;
use crate::extract::ApiPath;
use crate::routes::admin_settings::AccountSettings;
use crate::routes::history::player_not_found;
use crate::state::AppState;
use crate::team::Actor;
use crate::team::audit::{self, AuditEntry};
use axum::Router;
use axum::extract::State;
use axum::http::header::{CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use chrono::{DateTime, Utc};
use rows::{
    ExportedChat, ExportedDay, ExportedErasure, ExportedEvent, ExportedEventDay, ExportedFlag,
    ExportedLink, ExportedName, ExportedNote, ExportedPlayer, ExportedPunishment, ExportedRevoke,
    ExportedSession,
};
use serde::Serialize;
use serde_json::json;
use shared::problem::Problem;
use utoipa::ToSchema;
use uuid::Uuid;

/// The document an export streams (documentation: the writer emits these fields in this order
/// without ever holding the whole).
#[derive(Debug, Serialize, ToSchema)]
pub struct PlayerExport {
    /// The account exported from.
    pub account_id: Uuid,
    /// The player.
    pub player_uuid: Uuid,
    /// When the export was read (every section is read at that one moment).
    pub exported_at: DateTime<Utc>,
    /// The player's row (one element).
    pub player: Vec<ExportedPlayer>,
    /// Every name seen, with when.
    pub names: Vec<ExportedName>,
    /// Every session, with its IP hash as stored.
    pub sessions: Vec<ExportedSession>,
    /// Every chat line and command.
    pub chat: Vec<ExportedChat>,
    /// Punishments they received (with their revokes).
    pub punishments_received: Vec<ExportedPunishment>,
    /// Punishments they issued or revoked as staff.
    pub punishments_issued: Vec<ExportedPunishment>,
    /// Revoke records they made as staff.
    pub revokes_issued: Vec<ExportedRevoke>,
    /// Anti-cheat flags about them.
    pub anticheat_flags: Vec<ExportedFlag>,
    /// Staff notes about them.
    pub notes: Vec<ExportedNote>,
    /// Their linked chat-platform account (at most one).
    pub account_links: Vec<ExportedLink>,
    /// Their rank changes (the `rank_change` rows of `events`).
    pub rank_changes: Vec<ExportedEvent>,
    /// Their whole timeline: custom events and the internal ones.
    pub events: Vec<ExportedEvent>,
    /// The UTC days they were seen on.
    pub active_days: Vec<ExportedDay>,
    /// The UTC days they did each event on.
    pub event_days: Vec<ExportedEventDay>,
    /// Their erasure (at most one).
    pub erasure: Vec<ExportedErasure>,
}

/// The routes of this resource.
pub fn router() -> AdminRoutes {
    Router::new().route(
        "/api/admin/accounts/{account_id}/players/{uuid}/export",
        get(export_player),
    )
}

/// Export everything held about a player (one JSON document, streamed).
#[utoipa::path(get, path = "/api/admin/accounts/{account_id}/players/{uuid}/export",
    tag = "admin",
    security(("admin_key" = [])),
    params(
        ("account_id" = Uuid, Path, description = "The account"),
        ("uuid" = Uuid, Path, description = "The player's UUID"),
    ),
    responses(
        (status = 200, description = "The player's data, as an attachment \
            `player-<uuid>.json`, streamed (chunked)", body = PlayerExport),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not the admin key", body = Problem),
        (status = 404, description = "Unknown account, or a player the account has never seen",
            body = Problem),
    ))]
pub async fn export_player(
    _admin: AdminCaller,
    State(state): State<AppState>,
    ApiPath((account_id, player)): ApiPath<(Uuid, Uuid)>,
) -> Result<Response, ApiError> {
    state.key_store.require_account(account_id).await?;
    export(&state, account_id, player, &Actor::admin_key(), "admin_api").await
}

/// The export of `player` in `account` by `actor` (`via` says which door, for the audit log):
/// a 404 for a player the account has never seen (nor erased), else the streamed attachment.
pub async fn export(
    state: &AppState,
    account: Uuid,
    player: Uuid,
    actor: &Actor,
    via: &str,
) -> Result<Response, ApiError> {
    let settings = AccountSettings::load(&state.reads, account).await?;
    let mut tx = state.reads.begin().await?;
    // Before any read: every section then sees the snapshot of this first query.
    sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        .execute(&mut *tx)
        .await?;
    // An erased player is known even if erasure left no row of theirs in `players`.
    let known: bool = sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM players WHERE account_id = $1 AND uuid = $2) \
           OR EXISTS (SELECT 1 FROM erased_players WHERE account_id = $1 AND player_uuid = $2)",
    )
    .bind(account)
    .bind(player)
    .fetch_one(&mut *tx)
    .await?;
    if !known {
        return Err(player_not_found(player));
    }
    audit::record(
        &state.pool,
        AuditEntry {
            account_id: Some(account),
            actor,
            action: "player_exported",
            target: Some(player.to_string()),
            detail: json!({ "via": via }),
        },
    )
    .await?;
    let subject = stream::Subject {
        account,
        player,
        offline_after_seconds: settings.offline_after_seconds(),
    };
    let body = stream::body(tx, subject, state.shutdown.clone());
    Ok((
        [
            (CONTENT_TYPE, "application/json".to_owned()),
            (
                CONTENT_DISPOSITION,
                format!("attachment; filename=\"player-{player}.json\""),
            ),
        ],
        body,
    )
        .into_response())
}
