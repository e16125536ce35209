//! The Staff page's data: who is on duty (the roster of `GET /api/staff` with their current
//! session) and a leaderboard of punishments issued and time online over 7 or 30 days.

use crate::routes::admin_settings::AccountSettings;
use crate::routes::liveness::{EFFECTIVE_END, SERVER_STATUS_CTE};
use crate::routes::staff::{StaffMember, staff_roster};
use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::PgPool;
use utoipa::ToSchema;
use uuid::Uuid;

/// The leaderboard windows the dashboard offers, in days.
pub const LEADERBOARD_DAYS: [u32; 2] = [7, 30];

/// A staff member and their current session.
#[derive(Debug, Serialize, ToSchema)]
pub struct StaffOnDuty {
    /// The member, as `GET /api/staff` lists them.
    #[serde(flatten)]
    pub member: StaffMember,
    /// The name of their current server; null while offline or before it sent a name.
    pub server_name: Option<String>,
    /// How long their current session has lasted, in seconds; null while offline.
    pub session_seconds: Option<i64>,
}

/// One line of the staff leaderboard.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct LeaderboardEntry {
    /// Their player UUID.
    pub uuid: Uuid,
    /// Their name (as in the roster).
    pub username: Option<String>,
    /// Their permission group.
    pub rank: Option<String>,
    /// Punishments they issued in the window (revokes not counted).
    pub punishments: i64,
    /// Seconds they were online in the window (sessions clipped to it).
    pub online_seconds: i64,
}

/// Every staff member with their current session, ordered as the roster (by name).
pub async fn staff_on_duty(
    reads: &PgPool,
    account_id: Uuid,
    now: DateTime<Utc>,
) -> Result<Vec<StaffOnDuty>, sqlx::Error> {
    let roster = staff_roster(reads, account_id).await?;
    let names: Vec<(Uuid, Option<String>)> =
        sqlx::query_as("SELECT id, name FROM servers WHERE account_id = $1")
            .bind(account_id)
            .fetch_all(reads)
            .await?;
    Ok(roster
        .into_iter()
        .map(|member| {
            let server_name = member.current_server_id.and_then(|id| {
                names
                    .iter()
                    .find(|(server, _)| *server == id)
                    .and_then(|(_, name)| name.clone())
            });
            let session_seconds = member
                .session_started_at
                .filter(|_| member.is_online)
                .map(|start| (now - start).num_seconds().max(0));
            StaffOnDuty {
                member,
                server_name,
                session_seconds,
            }
        })
        .collect())
}

/// The staff leaderboard over the last `days` days up to now: every roster member with the
/// punishments they issued and their time online, most punishments first, then most time
/// online, then name.
pub async fn staff_leaderboard(
    reads: &PgPool,
    account_id: Uuid,
    days: u32,
) -> Result<Vec<LeaderboardEntry>, sqlx::Error> {
    let roster = staff_roster(reads, account_id).await?;
    let settings = AccountSettings::load(reads, account_id).await?;
    let uuids: Vec<Uuid> = roster.iter().map(|m| m.uuid).collect();
    let totals: Vec<(Uuid, i64, i64)> = sqlx::query_as(&format!(
        "WITH {SERVER_STATUS_CTE}, \
         window_start AS (SELECT now() - make_interval(days => $4) AS at) \
         SELECT st.uuid, \
           (SELECT count(*) FROM punishments pu \
            WHERE pu.account_id = $1 AND pu.staff_uuid = st.uuid \
              AND pu.issued_at > (SELECT at FROM window_start) AND pu.issued_at <= now()), \
           (SELECT COALESCE(sum(GREATEST(0, extract(epoch FROM \
                LEAST(COALESCE({EFFECTIVE_END}, now()), now()) \
                - GREATEST(se.joined_at, (SELECT at FROM window_start))))), 0)::int8 \
            FROM sessions se LEFT JOIN server_status ss ON ss.id = se.server_id \
            WHERE se.account_id = $1 AND se.player_uuid = st.uuid \
              AND (se.left_at IS NULL OR se.left_at > (SELECT at FROM window_start))) \
         FROM unnest($3::uuid[]) AS st(uuid)"
    ))
    .bind(account_id)
    .bind(settings.offline_after_seconds())
    .bind(&uuids)
    .bind(i32::try_from(days).unwrap_or(i32::MAX))
    .fetch_all(reads)
    .await?;
    let mut board: Vec<LeaderboardEntry> = roster
        .into_iter()
        .map(|member| {
            let (punishments, online_seconds) = totals
                .iter()
                .find(|(uuid, _, _)| *uuid == member.uuid)
                .map_or((0, 0), |&(_, p, s)| (p, s));
            LeaderboardEntry {
                uuid: member.uuid,
                username: member.username,
                rank: member.rank,
                punishments,
                online_seconds,
            }
        })
        .collect();
    // The roster is ordered by name, and the sort is stable: ties stay by name.
    board.sort_by_key(|e| std::cmp::Reverse((e.punishments, e.online_seconds)));
    Ok(board)
}
