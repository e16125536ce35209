//! `GET /api/players/{uuid}/alts`: the players of the same account who joined from an IP
//! this player joined from, compared by the keyed IP hash ingest stores on each session
//! (`sessions.ip_hash`). The hash itself is never returned, and sessions are only ever
//! compared within the caller's account.

use crate::auth::DashboardCaller;
use crate::error::ApiError;
use crate::extract::ApiPath;
use crate::routes::history::require_player;
use crate::routes::punishments::IS_ACTIVE;
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use chrono::{DateTime, Utc};
use serde::Serialize;
use shared::problem::Problem;
use utoipa::ToSchema;
use uuid::Uuid;

/// Most alts listed (the most recently shared first).
pub const MAX_ALTS: i64 = 200;

/// A player who shared an IP with the player asked about.
#[derive(Debug, Serialize, sqlx::FromRow, ToSchema)]
pub struct Alt {
    /// The alt's UUID.
    pub uuid: Uuid,
    /// Their latest name; null until a record carried one.
    pub username: Option<String>,
    /// How many of the alt's joins came from an IP the player also joined from.
    pub shared_joins: i64,
    /// The first of those joins (UTC).
    pub first_shared_join: DateTime<Utc>,
    /// The latest of those joins (UTC).
    pub last_shared_join: DateTime<Utc>,
    /// Under a ban in force now.
    pub is_banned: bool,
    /// Under a mute in force now.
    pub is_muted: bool,
}

/// A player's alts.
#[derive(Debug, Serialize, ToSchema)]
pub struct AltList {
    /// Most recently shared first (`last_shared_join`, then `uuid`, descending), at most 200.
    pub items: Vec<Alt>,
}

/// The players who joined from the same IP as this one, with whether each is banned or muted.
#[utoipa::path(get, path = "/api/players/{uuid}/alts", tag = "players",
    security(("dashboard_key" = [])),
    params(("uuid" = Uuid, Path, description = "The player's UUID")),
    responses(
        (status = 200, description = "The player's alts", body = AltList),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not a dashboard key", body = Problem),
        (status = 404, description = "The account has never seen this player", body = Problem),
    ))]
pub async fn list_alts(
    DashboardCaller(caller): DashboardCaller,
    State(state): State<AppState>,
    ApiPath(player): ApiPath<Uuid>,
) -> Result<Json<AltList>, ApiError> {
    require_player(&state.reads, caller.account_id, player).await?;
    // Both sides are read through (account_id, ...) indexes: the player's sessions by
    // sessions_player_time_idx, everyone behind each hash by sessions_ip_hash_idx.
    let standing = |kind: &str| {
        format!(
            "EXISTS (SELECT 1 FROM punishments p WHERE p.account_id = $1 \
               AND p.player_uuid = se.player_uuid AND p.type = '{kind}' AND {IS_ACTIVE})"
        )
    };
    let items = sqlx::query_as::<_, Alt>(&format!(
        "WITH hashes AS (SELECT DISTINCT ip_hash FROM sessions \
           WHERE account_id = $1 AND player_uuid = $2 AND ip_hash IS NOT NULL) \
         SELECT se.player_uuid AS uuid, pl.username, count(*) AS shared_joins, \
           min(se.joined_at) AS first_shared_join, max(se.joined_at) AS last_shared_join, \
           {} AS is_banned, {} AS is_muted \
         FROM sessions se JOIN hashes h ON h.ip_hash = se.ip_hash \
         LEFT JOIN players pl ON pl.account_id = se.account_id AND pl.uuid = se.player_uuid \
         WHERE se.account_id = $1 AND se.player_uuid <> $2 \
         GROUP BY se.player_uuid, pl.username \
         ORDER BY last_shared_join DESC, uuid DESC LIMIT {MAX_ALTS}",
        standing("ban"),
        standing("mute"),
    ))
    .bind(caller.account_id)
    .bind(player)
    .fetch_all(&state.reads)
    .await?;
    Ok(Json(AltList { items }))
}
