//! `GET /api/staff`: the account's staff roster.

use crate::auth::{DashboardCaller, DashboardRoutes};
use crate::error::ApiError;
use crate::routes::admin_settings::AccountSettings;
use crate::routes::liveness::{
    EFFECTIVE_RANK, SERVER_STATUS_CTE, SESSION_SERVER_ONLINE, STAFF_ACTIVITY_WINDOW,
};
use crate::state::AppState;
use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use serde::Serialize;
use shared::problem::Problem;
use utoipa::ToSchema;
use uuid::Uuid;

/// One member of staff.
#[derive(Debug, Serialize, sqlx::FromRow, ToSchema)]
pub struct StaffMember {
    /// Their player UUID.
    pub uuid: Uuid,
    /// Latest player name, else the name on their latest punishment.
    pub username: Option<String>,
    /// Their effective permission group; null when they are staff only by punishing.
    pub rank: Option<String>,
    /// Whether they are online now (an open session on an online server).
    pub is_online: bool,
    /// The server of their newest such session; null while offline.
    pub current_server_id: Option<Uuid>,
    /// When they were last seen as a player; null if never.
    pub last_seen: Option<DateTime<Utc>>,
    /// When their current session (on `current_server_id`) began; null while offline.
    pub session_started_at: Option<DateTime<Utc>>,
}

/// The staff roster.
#[derive(Debug, Serialize, ToSchema)]
pub struct StaffRoster {
    /// Ordered by username (case-insensitive, unnamed last), then uuid.
    pub items: Vec<StaffMember>,
}

/// The routes of this resource.
pub fn router() -> DashboardRoutes {
    Router::new().route("/api/staff", get(list_staff))
}

/// The roster query. Staff are the union of:
/// - every player whose effective rank ([`EFFECTIVE_RANK`]) is one of the account's
///   `staff_groups`, compared case-insensitively (`$3` holds them lower-cased);
/// - every `staff_uuid` of a punishment issued in the last 30 days, named by their player row
///   or else by the `staff_name` of their latest such punishment.
///
/// Online status and current server follow the player rule: an open session on an online
/// server, the newest one's server.
///
/// Every part reads through an index range whatever the account's size: members by rank
/// through `players_account_lower_rank_idx` / `players_account_lower_previous_rank_idx` (the
/// two cases of [`EFFECTIVE_RANK`], keyed by a rank's first 100 characters: staff groups have
/// at most 64, and the whole rank is compared again),
/// issuers by a skip scan of `punishments_staff_time_idx`
/// (one probe per distinct issuer, then their newest punishment of the window), and each
/// member's player row and newest open session by one index probe each (`LATERAL ... LIMIT 1`
/// keeps the planner from hashing every player or every open session of the account).
pub fn roster_sql() -> String {
    format!(
        "WITH RECURSIVE {SERVER_STATUS_CTE}, \
         by_rank AS ( \
           SELECT p.uuid FROM players p \
           WHERE p.account_id = $1 AND p.rank IS NOT NULL \
             AND lower(left(p.rank, 100)) = ANY($3::text[]) \
             AND lower(p.rank) = ANY($3::text[]) \
             AND (p.rank_expires_at IS NULL OR p.rank_expires_at > now()) \
           UNION \
           SELECT p.uuid FROM players p \
           WHERE p.account_id = $1 AND p.rank_expires_at IS NOT NULL \
             AND p.rank_expires_at <= now() \
             AND lower(left(p.previous_rank, 100)) = ANY($3::text[]) \
             AND lower(p.previous_rank) = ANY($3::text[])), \
         issuers AS ( \
           (SELECT pu.staff_uuid FROM punishments pu \
            WHERE pu.account_id = $1 AND pu.staff_uuid IS NOT NULL \
            ORDER BY pu.staff_uuid LIMIT 1) \
           UNION ALL \
           SELECT (SELECT pu.staff_uuid FROM punishments pu \
                   WHERE pu.account_id = $1 AND pu.staff_uuid > i.staff_uuid \
                   ORDER BY pu.staff_uuid LIMIT 1) \
           FROM issuers i WHERE i.staff_uuid IS NOT NULL), \
         by_punishing AS ( \
           SELECT i.staff_uuid, latest.staff_name FROM issuers i \
           CROSS JOIN LATERAL ( \
             SELECT pu.staff_name FROM punishments pu \
             WHERE pu.account_id = $1 AND pu.staff_uuid = i.staff_uuid \
               AND pu.issued_at > now() - {STAFF_ACTIVITY_WINDOW} \
             ORDER BY pu.issued_at DESC, pu.id DESC LIMIT 1) latest \
           WHERE i.staff_uuid IS NOT NULL), \
         staff AS (SELECT uuid FROM by_rank UNION SELECT staff_uuid FROM by_punishing) \
         SELECT st.uuid, COALESCE(p.username, bp.staff_name) AS username, \
           {EFFECTIVE_RANK} AS rank, cs.server_id IS NOT NULL AS is_online, \
           cs.server_id AS current_server_id, p.last_seen, cs.joined_at AS session_started_at \
         FROM staff st \
         LEFT JOIN LATERAL ( \
           SELECT p.username, p.last_seen, p.rank, p.previous_rank, p.rank_expires_at \
           FROM players p WHERE p.account_id = $1 AND p.uuid = st.uuid LIMIT 1) p ON true \
         LEFT JOIN by_punishing bp ON bp.staff_uuid = st.uuid \
         LEFT JOIN LATERAL ( \
           SELECT se.server_id, se.joined_at \
           FROM sessions se LEFT JOIN server_status ss ON ss.id = se.server_id \
           WHERE se.account_id = $1 AND se.player_uuid = st.uuid AND se.left_at IS NULL \
             AND {SESSION_SERVER_ONLINE} \
           ORDER BY se.joined_at DESC, se.id DESC LIMIT 1) cs ON true \
         ORDER BY lower(COALESCE(p.username, bp.staff_name)) NULLS LAST, st.uuid"
    )
}

/// List the account's staff: members of a staff group, and whoever punished in the last 30 days.
#[utoipa::path(get, path = "/api/staff", tag = "players",
    security(("dashboard_key" = [])),
    responses(
        (status = 200, description = "The staff roster", body = StaffRoster),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not a dashboard key", body = Problem),
    ))]
pub async fn list_staff(
    DashboardCaller(caller): DashboardCaller,
    State(state): State<AppState>,
) -> Result<Json<StaffRoster>, ApiError> {
    let items = staff_roster(&state.reads, caller.account_id).await?;
    Ok(Json(StaffRoster { items }))
}

/// The account's staff roster, ordered by name (the API and the pages).
pub async fn staff_roster(
    reads: &sqlx::PgPool,
    account_id: Uuid,
) -> Result<Vec<StaffMember>, sqlx::Error> {
    let settings = AccountSettings::load(reads, account_id).await?;
    sqlx::query_as::<_, StaffMember>(&roster_sql())
        .bind(account_id)
        .bind(settings.offline_after_seconds())
        .bind(settings.staff_groups_lowercase())
        .fetch_all(reads)
        .await
}
