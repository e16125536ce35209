//! The Anti-cheat page's summaries of the last hours: the most-flagged players and the flags
//! of each check. Both read one range of `anticheat_flags_account_time_idx`
//! (`account_id, flagged_at`) and never another account's rows.

use chrono::{DateTime, Utc};
use sqlx::PgPool;
use uuid::Uuid;

/// The window both summaries cover, in hours.
pub const SUMMARY_HOURS: i64 = 24;
/// Most players listed as most flagged.
pub const MOST_FLAGGED_LIMIT: i64 = 10;

/// A player and their flags in the window.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct FlaggedPlayer {
    /// The player.
    pub uuid: Uuid,
    /// Their latest name, when a record carried one.
    pub username: Option<String>,
    /// Flags raised against them in the window.
    pub flags: i64,
    /// How many different checks fired.
    pub checks: i64,
    /// The highest violation level among them.
    pub max_violation_level: f64,
    /// The latest of them.
    pub last_flagged_at: DateTime<Utc>,
}

/// One check and its flags in the window.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct CheckCount {
    /// The check's name as most recently reported (checks compare case-insensitively, as the
    /// list's filter does).
    pub check_name: String,
    /// Flags it raised.
    pub flags: i64,
    /// Different players it flagged.
    pub players: i64,
}

/// The players with the most flags raised at or after `since`, most first (then the most
/// recently flagged), at most [`MOST_FLAGGED_LIMIT`].
pub async fn most_flagged(
    pool: &PgPool,
    account_id: Uuid,
    since: DateTime<Utc>,
) -> Result<Vec<FlaggedPlayer>, sqlx::Error> {
    sqlx::query_as::<_, FlaggedPlayer>(
        "SELECT f.player_uuid AS uuid, pl.username, f.flags, f.checks, \
           f.max_violation_level, f.last_flagged_at \
         FROM (SELECT player_uuid, count(*) AS flags, \
                 count(DISTINCT lower(check_name)) AS checks, \
                 max(violation_level) AS max_violation_level, \
                 max(flagged_at) AS last_flagged_at \
               FROM anticheat_flags WHERE account_id = $1 AND flagged_at >= $2 \
               GROUP BY player_uuid \
               ORDER BY flags DESC, last_flagged_at DESC, player_uuid LIMIT $3) f \
         LEFT JOIN players pl ON pl.account_id = $1 AND pl.uuid = f.player_uuid \
         ORDER BY f.flags DESC, f.last_flagged_at DESC, f.player_uuid",
    )
    .bind(account_id)
    .bind(since)
    .bind(MOST_FLAGGED_LIMIT)
    .fetch_all(pool)
    .await
}

/// Every check that raised a flag at or after `since`, with its flags and players, the most
/// flags first (then by name).
pub async fn counts_per_check(
    pool: &PgPool,
    account_id: Uuid,
    since: DateTime<Utc>,
) -> Result<Vec<CheckCount>, sqlx::Error> {
    sqlx::query_as::<_, CheckCount>(
        "SELECT (array_agg(check_name ORDER BY flagged_at DESC))[1] AS check_name, \
           count(*) AS flags, count(DISTINCT player_uuid) AS players \
         FROM anticheat_flags WHERE account_id = $1 AND flagged_at >= $2 \
         GROUP BY lower(check_name) \
         ORDER BY flags DESC, lower(check_name)",
    )
    .bind(account_id)
    .bind(since)
    .fetch_all(pool)
    .await
}
