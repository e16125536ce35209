//! Who is online now, for the `/players` page: players with an open session on an online
//! server (the rule of `crate::routes::liveness`), read from the open sessions (a partial
//! index), not by walking every player.

use chrono::{DateTime, Utc};
use sqlx::PgPool;
use uuid::Uuid;

/// A player online now, for the `/players` page.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct OnlinePlayer {
    /// The player's UUID.
    pub uuid: Uuid,
    /// Latest name seen.
    pub username: Option<String>,
    /// Their server's name, when it sent one.
    pub server_name: Option<String>,
    /// When the open session started.
    pub joined_at: DateTime<Utc>,
}

/// An [`OnlinePlayer`] with how many are online in all.
#[derive(sqlx::FromRow)]
struct OnlineRow {
    #[sqlx(flatten)]
    player: OnlinePlayer,
    total: i64,
}

/// Players with an open session on an online server, newest join first (at most `limit`),
/// and how many there are in all. Read from the open sessions (a partial index), not by
/// walking every player.
pub async fn online_now(
    pool: &PgPool,
    account_id: Uuid,
    offline_after: f64,
    limit: i64,
) -> Result<(Vec<OnlinePlayer>, i64), sqlx::Error> {
    let rows: Vec<OnlineRow> = sqlx::query_as(
        "SELECT o.player_uuid AS uuid, p.username, o.server_name, o.joined_at,
                count(*) OVER () AS total
         FROM (SELECT DISTINCT ON (se.player_uuid) se.player_uuid, s.name AS server_name,
                      se.joined_at
               FROM sessions se
               LEFT JOIN servers s ON s.account_id = se.account_id AND s.id = se.server_id
               WHERE se.account_id = $1 AND se.left_at IS NULL
                 AND COALESCE(s.online_flag
                     AND s.last_heartbeat_at > now() - make_interval(secs => $2::float8), true)
               ORDER BY se.player_uuid, se.joined_at DESC) o
         LEFT JOIN players p ON p.account_id = $1 AND p.uuid = o.player_uuid
         ORDER BY o.joined_at DESC, o.player_uuid
         LIMIT $3",
    )
    .bind(account_id)
    .bind(offline_after)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    let total = rows.first().map_or(0, |r| r.total);
    Ok((rows.into_iter().map(|r| r.player).collect(), total))
}
