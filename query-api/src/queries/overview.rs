//! The Overview: the network at a glance (servers and players online, each server's TPS),
//! the players-online chart of the last 24 hours, staff online now, and recent activity.
//!
//! Players are counted on the game servers only: a proxy's players are the same people as
//! the players of the servers behind it, so its count would count each of them twice.

use crate::routes::servers::{ServerStatus, server_statuses};
use crate::routes::staff::{StaffMember, staff_roster};
use chrono::{DateTime, Duration, DurationRound, Utc};
use serde::Serialize;
use sqlx::PgPool;
use utoipa::ToSchema;
use uuid::Uuid;

pub use shared::timeline::ACTIVITY_EVENTS;

/// Width of a bucket of the network chart: 288 points over 24 hours, read from the
/// projector's `network_five_minutes` (one row per bucket, not one per server).
pub const NETWORK_BUCKET: Duration = Duration::minutes(5);

/// How far back the network chart looks.
pub const NETWORK_SPAN: Duration = Duration::hours(24);

/// How many activity items the Overview shows (the projector keeps more).
pub const ACTIVITY_LIMIT: i64 = 50;
const _: () = assert!(ACTIVITY_LIMIT <= shared::timeline::RECENT_ACTIVITY_KEPT);

/// One bucket of the network chart.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct NetworkPoint {
    /// Start of the bucket (UTC).
    pub at: DateTime<Utc>,
    /// Players online across the network: each game server's average over the bucket, summed
    /// (proxies left out); null when no game server sent a heartbeat in it.
    pub players: Option<f64>,
}

/// What an activity item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ActivityKind {
    /// A player joined a server.
    Join,
    /// A player left.
    Quit,
    /// A ban, mute, kick or warning was issued.
    Punishment,
    /// A punishment was revoked.
    Revoke,
    /// A player's permission group changed.
    RankChange,
    /// An anti-cheat check flagged a player.
    Flag,
}

impl ActivityKind {
    /// The kind of the timeline event `name` (`anticheat_flag` for flags).
    pub fn of(name: &str) -> Option<ActivityKind> {
        Some(match name {
            "session_join" => Self::Join,
            "session_quit" => Self::Quit,
            "punish_revoke" => Self::Revoke,
            "rank_change" => Self::RankChange,
            "anticheat_flag" => Self::Flag,
            name if ACTIVITY_EVENTS.contains(&name) => Self::Punishment,
            _ => return None,
        })
    }
}

/// One item of the activity list.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Activity {
    /// When it happened.
    pub at: DateTime<Utc>,
    /// What happened.
    pub kind: ActivityKind,
    /// The timeline event name (`session_join`, `punish_ban`, `rank_change`, ...), or
    /// `anticheat_flag`.
    pub name: String,
    /// The player it is about.
    pub player_uuid: Option<Uuid>,
    /// Their name as the record gave it, else their latest known name.
    pub player_name: Option<String>,
    /// Where, when the record names a server.
    pub server_id: Option<Uuid>,
    /// Who did it: the staff member of a punishment, revoke or rank change.
    pub actor: Option<String>,
    /// What: a punishment's reason, a rank change's new group, a flag's check ("Reach A").
    pub detail: Option<String>,
}

/// An activity item as read, before its kind is known.
#[derive(Debug, sqlx::FromRow)]
struct ActivityRow {
    at: DateTime<Utc>,
    name: String,
    player_uuid: Option<Uuid>,
    player_name: Option<String>,
    server_id: Option<Uuid>,
    actor: Option<String>,
    detail: Option<String>,
}

/// Everything the Overview shows.
#[derive(Debug, Serialize, ToSchema)]
pub struct Overview {
    /// Servers online now.
    pub servers_online: usize,
    /// Servers that ever sent a heartbeat.
    pub servers_total: usize,
    /// Players on the online game servers at their last heartbeat (proxies left out).
    pub players_online: i64,
    /// Every server with its TPS and players now (as `GET /api/servers`).
    pub servers: Vec<ServerStatus>,
    /// Players online across the network (game servers only) over the last 24 hours, every
    /// 5 minutes, oldest first (288 points).
    pub network: Vec<NetworkPoint>,
    /// Staff online now (as `GET /api/staff`, online only).
    pub staff_online: Vec<StaffMember>,
    /// Joins, quits, punishments, flags and rank changes, newest first.
    pub activity: Vec<Activity>,
}

/// The Overview of `account_id` as of `now`. Its four reads are independent and each reads a
/// bounded number of rows; they run at once, each on its own pooled connection.
pub async fn overview(
    reads: &PgPool,
    account_id: Uuid,
    now: DateTime<Utc>,
) -> Result<Overview, sqlx::Error> {
    let (servers, mut staff_online, network, activity) = tokio::try_join!(
        server_statuses(reads, account_id),
        staff_roster(reads, account_id),
        network_players(reads, account_id, now),
        recent_activity(reads, account_id, ACTIVITY_LIMIT),
    )?;
    let servers_online = servers.iter().filter(|s| s.is_online).count();
    let players_online = players_online(&servers);
    staff_online.retain(|member| member.is_online);
    Ok(Overview {
        servers_online,
        servers_total: servers.len(),
        players_online,
        servers,
        network,
        staff_online,
        activity,
    })
}

/// Players on the online game servers of `servers` at their last heartbeat. A proxy's players
/// are on the servers behind it too: counting them would count each player twice.
pub fn players_online(servers: &[ServerStatus]) -> i64 {
    servers
        .iter()
        .filter(|s| s.is_online && !s.is_proxy())
        .filter_map(|s| s.player_count)
        .map(i64::from)
        .sum()
}

/// The network chart's rows: `$1` the account, `$2`..`$3` the span (one row per bucket).
pub const NETWORK_SQL: &str = "SELECT bucket, players FROM network_five_minutes \
    WHERE account_id = $1 AND bucket >= $2 AND bucket < $3 ORDER BY bucket";

/// Players online across the network over [`NETWORK_SPAN`] up to `now`, per
/// [`NETWORK_BUCKET`], every bucket present (null where no game server reported). Proxies are
/// left out (see [`players_online`]): the projector sums each bucket's game servers into
/// `network_five_minutes` as their heartbeats arrive, and sums a server's buckets again when
/// its role changes.
pub async fn network_players(
    reads: &PgPool,
    account_id: Uuid,
    now: DateTime<Utc>,
) -> Result<Vec<NetworkPoint>, sqlx::Error> {
    let to = now.duration_trunc(NETWORK_BUCKET).unwrap_or(now) + NETWORK_BUCKET;
    let from = to - NETWORK_SPAN;
    let rows: Vec<(DateTime<Utc>, Option<f64>)> = sqlx::query_as(NETWORK_SQL)
        .bind(account_id)
        .bind(from)
        .bind(to)
        .fetch_all(reads)
        .await?;
    let mut rows = rows.into_iter().peekable();
    let buckets = (NETWORK_SPAN.num_seconds() / NETWORK_BUCKET.num_seconds()) as i32;
    Ok((0..buckets)
        .map(|i| {
            let at = from + NETWORK_BUCKET * i;
            let players = rows
                .next_if(|(bucket, _)| *bucket == at)
                .and_then(|(_, p)| p);
            NetworkPoint { at, players }
        })
        .collect())
}

/// The activity list's statement: `$1` the account, `$2` the limit (at most
/// [`shared::timeline::RECENT_ACTIVITY_KEPT`]).
pub const ACTIVITY_SQL: &str = "SELECT a.at, a.name, a.player_uuid, \
                COALESCE(a.player_name, p.username) AS player_name, \
                a.server_id, a.actor, a.detail \
         FROM ( \
           SELECT * FROM ( \
             SELECT e.occurred_at AS at, e.seq AS tiebreak, e.name, e.player_uuid, \
                    e.server_id, e.properties->>'player_name' AS player_name, \
                    e.properties->>'staff_name' AS actor, \
                    CASE WHEN e.name = 'rank_change' THEN e.properties->>'group' \
                         WHEN e.name = 'punish_revoke' THEN e.properties->>'revoke_reason' \
                         WHEN e.name LIKE 'punish\\_%' THEN e.properties->>'reason' END AS detail \
             FROM recent_events e WHERE e.account_id = $1 \
             ORDER BY e.occurred_at DESC, e.seq DESC, e.id DESC LIMIT $2) e \
           UNION ALL \
           SELECT * FROM ( \
             SELECT f.flagged_at, NULL::int8, 'anticheat_flag', f.player_uuid, f.server_id, \
                    NULL::text, NULL::text, \
                    concat_ws(' ', f.check_name, f.check_type) \
             FROM recent_flags f WHERE f.account_id = $1 \
             ORDER BY f.flagged_at DESC, f.id DESC LIMIT $2) f \
         ) a \
         LEFT JOIN players p ON p.account_id = $1 AND p.uuid = a.player_uuid \
         ORDER BY a.at DESC, a.tiebreak DESC NULLS LAST \
         LIMIT $2";

/// The newest `limit` joins, quits, punishments, revokes, rank changes and anti-cheat flags
/// of the account, newest first.
///
/// Read from the projector's `recent_events` and `recent_flags` (the newest
/// [`shared::timeline::RECENT_ACTIVITY_KEPT`] of each per account): two ranges of their time
/// indexes and a player's name by key per item, however big the timeline.
pub async fn recent_activity(
    reads: &PgPool,
    account_id: Uuid,
    limit: i64,
) -> Result<Vec<Activity>, sqlx::Error> {
    let rows = sqlx::query_as::<_, ActivityRow>(ACTIVITY_SQL)
        .bind(account_id)
        .bind(limit)
        .fetch_all(reads)
        .await?;
    Ok(rows
        .into_iter()
        .filter_map(|row| {
            Some(Activity {
                kind: ActivityKind::of(&row.name)?,
                at: row.at,
                name: row.name,
                player_uuid: row.player_uuid,
                player_name: row.player_name,
                server_id: row.server_id,
                actor: row.actor,
                detail: row.detail,
            })
        })
        .collect())
}
