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
use sqlx::PgPool;
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
    let items = fetch(&state.reads, caller.account_id, player).await?;
    Ok(Json(AltList { items }))
}

/// SQL expression: whether player `se.player_uuid` is under a punishment of `kind` in force
/// now (`$1` is the account).
fn standing(kind: &str) -> String {
    format!(
        "EXISTS (SELECT 1 FROM punishments p WHERE p.account_id = $1 \
           AND p.player_uuid = se.player_uuid AND p.type = '{kind}' AND {IS_ACTIVE})"
    )
}

/// `player`'s alts in `account_id`, most recently shared first, at most [`MAX_ALTS`]: what
/// `GET /api/players/{uuid}/alts` returns and the Investigate page shows.
pub async fn fetch(pool: &PgPool, account_id: Uuid, player: Uuid) -> Result<Vec<Alt>, sqlx::Error> {
    // Both sides are read through (account_id, ...) indexes: the player's sessions by
    // sessions_player_time_idx, everyone behind each hash by sessions_ip_hash_idx.
    sqlx::query_as::<_, Alt>(&format!(
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
    .bind(account_id)
    .bind(player)
    .fetch_all(pool)
    .await
}

/// A joining player's alt who is banned now (the live activity feed's mark).
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct BannedAlt {
    /// The player who joined.
    pub player: Uuid,
    /// One of their banned alts: the first by name.
    pub uuid: Uuid,
    /// That alt's latest name.
    pub username: Option<String>,
    /// How many of their alts are banned now (this one included).
    pub banned_alts: i64,
}

/// For each join `(player, ip_hash of the join)`, one of the player's alts banned now, if any:
/// one query for the whole batch. The join's own hash counts as well as the player's earlier
/// sessions, so a join the sessions model has not written yet is judged all the same.
pub async fn banned_alts(
    pool: &PgPool,
    account_id: Uuid,
    joins: &[(Uuid, Option<String>)],
) -> Result<Vec<BannedAlt>, sqlx::Error> {
    if joins.is_empty() {
        return Ok(Vec::new());
    }
    let (players, hashes): (Vec<Uuid>, Vec<Option<String>>) = joins.iter().cloned().unzip();
    // Per join: the hashes by sessions_player_time_idx, the players behind them by
    // sessions_ip_hash_idx, each one's bans by punishments_player_time_idx.
    sqlx::query_as::<_, BannedAlt>(&format!(
        "SELECT j.player, b.uuid, b.username, b.banned_alts \
         FROM unnest($2::uuid[], $3::text[]) AS j(player, ip_hash) \
         CROSS JOIN LATERAL ( \
           SELECT se.player_uuid AS uuid, pl.username, count(*) OVER () AS banned_alts \
           FROM (SELECT DISTINCT se.player_uuid FROM sessions se \
                 WHERE se.account_id = $1 AND se.player_uuid <> j.player \
                   AND se.ip_hash IN ( \
                     SELECT s.ip_hash FROM sessions s WHERE s.account_id = $1 \
                       AND s.player_uuid = j.player AND s.ip_hash IS NOT NULL \
                     UNION SELECT j.ip_hash WHERE j.ip_hash IS NOT NULL) \
                   AND {}) se \
           LEFT JOIN players pl ON pl.account_id = $1 AND pl.uuid = se.player_uuid \
           ORDER BY pl.username NULLS LAST, se.player_uuid LIMIT 1) b",
        standing("ban"),
    ))
    .bind(account_id)
    .bind(players)
    .bind(hashes)
    .fetch_all(pool)
    .await
}
