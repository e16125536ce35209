//! `GET /api/players/{uuid}`: one player's profile: identity, status, rank, playtime, joins
//! and recent moderation history.

use crate::auth::{DashboardCaller, DashboardRoutes};
use crate::error::ApiError;
use crate::extract::ApiPath;
use crate::routes::admin_settings::AccountSettings;
use crate::routes::flags::{self, FlagItem};
use crate::routes::history::{PageRequest, player_not_found};
use crate::routes::liveness::{
    EFFECTIVE_END, EFFECTIVE_RANK, SERVER_STATUS_CTE, STAFF_ACTIVITY_WINDOW,
};
use crate::routes::punishments::{self, PunishmentItem};
use crate::state::AppState;
use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use serde::Serialize;
use shared::problem::Problem;
use sqlx::PgPool;
use utoipa::ToSchema;
use uuid::Uuid;

/// Most joins in a profile.
pub const MAX_JOINS: i64 = 100;
/// Most punishments and most flags in a profile.
pub const RECENT_ITEMS: i64 = 10;

/// A player as the dashboard shows them.
#[derive(Debug, Serialize, ToSchema)]
pub struct PlayerProfile {
    /// The player's UUID.
    pub uuid: Uuid,
    /// Latest name seen; null until a record carried one.
    pub username: Option<String>,
    /// First record about them (UTC).
    pub first_seen: DateTime<Utc>,
    /// Latest record about them (UTC).
    pub last_seen: DateTime<Utc>,
    /// An open session on an online server.
    pub is_online: bool,
    /// The server of their newest such session; null while offline.
    pub current_server_id: Option<Uuid>,
    /// Effective permission group (a temporary group falls back once it expires).
    pub rank: Option<String>,
    /// In one of the account's staff groups, or issued a punishment in the last 30 days.
    pub is_staff: bool,
    /// Seconds played, summed over every session (open ones up to now).
    pub total_playtime: i64,
    /// The linked chat-platform account; null when none.
    pub linked_account: Option<LinkedAccount>,
    /// When the player was erased: their names, chat, IP hashes, linked account,
    /// notes and punishment reasons are gone. Null for a player never erased.
    pub erased_at: Option<DateTime<Utc>>,
    /// Sessions, newest first, at most 100.
    pub joins: Vec<Join>,
    /// Punishments issued to them, newest first, at most 10.
    pub recent_punishments: Vec<PunishmentItem>,
    /// Anti-cheat flags, newest first, at most 10.
    pub recent_anticheat_flags: Vec<FlagItem>,
}

/// A chat-platform account linked to the player.
#[derive(Debug, Serialize, ToSchema)]
pub struct LinkedAccount {
    /// E.g. "discord".
    pub platform: String,
    /// The account's id on that platform.
    pub external_id: Option<String>,
    /// The account's name on that platform.
    pub external_name: Option<String>,
    /// When it was linked (UTC).
    pub linked_at: Option<DateTime<Utc>>,
}

/// One session of the player.
#[derive(Debug, Serialize, sqlx::FromRow, ToSchema)]
pub struct Join {
    /// The server joined.
    pub server_id: Uuid,
    /// Its name, when its heartbeats carry one.
    pub server_name: Option<String>,
    /// When they joined (UTC).
    pub joined_at: DateTime<Utc>,
    /// The session's effective end (see [`EFFECTIVE_END`]); null while still open.
    pub left_at: Option<DateTime<Utc>>,
}

#[derive(Debug, sqlx::FromRow)]
struct PlayerRow {
    uuid: Uuid,
    username: Option<String>,
    first_seen: DateTime<Utc>,
    last_seen: DateTime<Utc>,
    rank: Option<String>,
    is_staff: bool,
    linked_platform: Option<String>,
    linked_external_id: Option<String>,
    linked_external_name: Option<String>,
    linked_at: Option<DateTime<Utc>>,
    erased_at: Option<DateTime<Utc>>,
}

/// Playtime and current server, worked out over all of the player's sessions.
#[derive(Debug, sqlx::FromRow)]
struct Presence {
    total_playtime: i64,
    current_server_id: Option<Uuid>,
}

/// The routes of this resource.
pub fn router() -> DashboardRoutes {
    Router::new().route("/api/players/{uuid}", get(get_player))
}

/// The player's row, with the effective rank and whether they are staff: their effective rank
/// is one of `$3` (the staff groups, lower-cased: a case-insensitive match), or they issued a
/// punishment (as `staff_uuid`) in the last 30 days.
async fn player_row(
    pool: &PgPool,
    account_id: Uuid,
    player: Uuid,
    settings: &AccountSettings,
) -> Result<Option<PlayerRow>, sqlx::Error> {
    sqlx::query_as::<_, PlayerRow>(&format!(
        "SELECT p.uuid, p.username, p.first_seen, p.last_seen, {EFFECTIVE_RANK} AS rank, \
           COALESCE(lower({EFFECTIVE_RANK}) = ANY($3::text[]), false) OR EXISTS ( \
             SELECT 1 FROM punishments pu WHERE pu.account_id = p.account_id \
               AND pu.staff_uuid = p.uuid AND pu.issued_at > now() - {STAFF_ACTIVITY_WINDOW}) \
             AS is_staff, \
           p.linked_platform, p.linked_external_id, p.linked_external_name, p.linked_at, \
           (SELECT e.erased_at FROM erased_players e \
              WHERE e.account_id = p.account_id AND e.player_uuid = p.uuid) AS erased_at \
         FROM players p WHERE p.account_id = $1 AND p.uuid = $2"
    ))
    .bind(account_id)
    .bind(player)
    .bind(settings.staff_groups_lowercase())
    .fetch_optional(pool)
    .await
}

/// The player's sessions with their effective ends ([`EFFECTIVE_END`]); binds `$1` account,
/// `$2` offline-after seconds, `$3` player.
fn spans_cte() -> String {
    format!(
        "WITH {SERVER_STATUS_CTE}, spans AS ( \
           SELECT se.id, se.server_id, ss.name AS server_name, se.joined_at, \
             {EFFECTIVE_END} AS left_at \
           FROM sessions se LEFT JOIN server_status ss ON ss.id = se.server_id \
           WHERE se.account_id = $1 AND se.player_uuid = $3) "
    )
}

/// The newest [`MAX_JOINS`] sessions.
async fn joins(
    pool: &PgPool,
    account_id: Uuid,
    player: Uuid,
    settings: &AccountSettings,
) -> Result<Vec<Join>, sqlx::Error> {
    sqlx::query_as::<_, Join>(&format!(
        "{} SELECT server_id, server_name, joined_at, left_at FROM spans \
         ORDER BY joined_at DESC, id DESC LIMIT {MAX_JOINS}",
        spans_cte()
    ))
    .bind(account_id)
    .bind(settings.offline_after_seconds())
    .bind(player)
    .fetch_all(pool)
    .await
}

/// Online status and total playtime.
///
/// `current_server_id` is the server of the newest session that is still open (left_at NULL
/// on an online server); the player is online exactly when there is one. `total_playtime` is
/// the sum over all sessions of (effective end, or now() for a session still open) −
/// joined_at, in whole seconds (rounded down).
async fn presence(
    pool: &PgPool,
    account_id: Uuid,
    player: Uuid,
    settings: &AccountSettings,
) -> Result<Presence, sqlx::Error> {
    sqlx::query_as::<_, Presence>(&format!(
        "{} SELECT COALESCE(floor(SUM(EXTRACT(EPOCH FROM \
             GREATEST(COALESCE(left_at, now()), joined_at) - joined_at))), 0)::bigint \
             AS total_playtime, \
           (SELECT server_id FROM spans WHERE left_at IS NULL \
              ORDER BY joined_at DESC, id DESC LIMIT 1) AS current_server_id \
         FROM spans",
        spans_cte()
    ))
    .bind(account_id)
    .bind(settings.offline_after_seconds())
    .bind(player)
    .fetch_one(pool)
    .await
}

/// A player's profile.
#[utoipa::path(get, path = "/api/players/{uuid}", tag = "players",
    security(("dashboard_key" = [])),
    params(("uuid" = Uuid, Path, description = "The player's UUID")),
    responses(
        (status = 200, description = "The player", body = PlayerProfile),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not a dashboard key", body = Problem),
        (status = 404, description = "The account has never seen this player", body = Problem),
    ))]
pub async fn get_player(
    DashboardCaller(caller): DashboardCaller,
    State(state): State<AppState>,
    ApiPath(player): ApiPath<Uuid>,
) -> Result<Json<PlayerProfile>, ApiError> {
    let found = profile(&state.reads, caller.account_id, player).await?;
    Ok(Json(found.ok_or_else(|| player_not_found(player))?))
}

/// The profile of `player`, or `None` when the account has never seen them: what
/// `GET /api/players/{uuid}` returns and the Investigate page shows.
pub async fn profile(
    pool: &PgPool,
    account: Uuid,
    player: Uuid,
) -> Result<Option<PlayerProfile>, sqlx::Error> {
    let settings = AccountSettings::load(pool, account).await?;
    let Some(row) = player_row(pool, account, player, &settings).await? else {
        return Ok(None);
    };
    let recent = PageRequest {
        limit: RECENT_ITEMS,
        cursor: None,
    };
    let (joins, presence, mut recent_punishments, mut recent_anticheat_flags) = tokio::try_join!(
        joins(pool, account, player, &settings),
        presence(pool, account, player, &settings),
        punishments::fetch(pool, account, player, &recent),
        flags::fetch(pool, account, player, &recent),
    )?;
    let keep = usize::try_from(RECENT_ITEMS).unwrap_or(usize::MAX);
    recent_punishments.truncate(keep);
    recent_anticheat_flags.truncate(keep);
    let linked_account = row.linked_platform.map(|platform| LinkedAccount {
        platform,
        external_id: row.linked_external_id,
        external_name: row.linked_external_name,
        linked_at: row.linked_at,
    });
    Ok(Some(PlayerProfile {
        uuid: row.uuid,
        username: row.username,
        first_seen: row.first_seen,
        last_seen: row.last_seen,
        is_online: presence.current_server_id.is_some(),
        current_server_id: presence.current_server_id,
        rank: row.rank,
        is_staff: row.is_staff,
        total_playtime: presence.total_playtime,
        linked_account,
        erased_at: row.erased_at,
        joins,
        recent_punishments,
        recent_anticheat_flags,
    }))
}
