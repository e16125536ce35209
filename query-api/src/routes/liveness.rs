//! When a server counts as online and when a session counts as ended: the rules every dashboard
//! read shares (players, servers, staff), as SQL fragments.
//!
//! The projector stores facts (the last heartbeat and its own online flag, joins and quits);
//! liveness depends on the time of the read, so it is worked out here against `now()`.
//!
//! Every query that uses these fragments binds `$1` = the caller's account id and `$2` =
//! [`crate::routes::admin_settings::AccountSettings::offline_after_seconds`] (float8).

/// A CTE, `server_status`, of the account's servers with `is_online`.
///
/// A server is online when its last heartbeat said so and that heartbeat is recent:
/// `servers.online_flag AND servers.last_heartbeat_at > now() - 3 × sync_interval_seconds`
/// (the account's setting, default 15). `online_flag` is false after a graceful-shutdown
/// heartbeat, so such a server is offline at once.
pub const SERVER_STATUS_CTE: &str = "server_status AS (\
    SELECT s.id, s.name, s.version, s.role, s.tps, s.player_count, s.max_players, \
      s.last_heartbeat_at, \
      (s.online_flag AND s.last_heartbeat_at > now() - make_interval(secs => $2::float8)) \
        AS is_online \
    FROM servers s WHERE s.account_id = $1)";

/// SQL expression: whether the server of a session (`server_status` LEFT JOINed as `ss`)
/// counts as online.
///
/// A server that has not sent a heartbeat yet (no `servers` row) counts as online: nothing
/// says it went down, and a plugin may report a join before its first heartbeat is projected.
pub const SESSION_SERVER_ONLINE: &str = "COALESCE(ss.is_online, true)";

/// SQL expression: the effective end of session `se` (with its server as `ss`), NULL while
/// it is still open.
///
/// It is `left_at` when the session was closed. An open session on a server that is offline
/// (by [`SERVER_STATUS_CTE`]'s rule) ended at the server's last heartbeat, but never before
/// its own `joined_at`. An open session on an online server is still open (NULL).
pub const EFFECTIVE_END: &str = "CASE WHEN se.left_at IS NOT NULL THEN se.left_at \
    WHEN COALESCE(ss.is_online, true) THEN NULL \
    ELSE GREATEST(ss.last_heartbeat_at, se.joined_at) END";

/// SQL expression: the effective permission group of player `p`.
///
/// `players.rank`, or `previous_rank` once a temporary group's `rank_expires_at <= now()`.
pub const EFFECTIVE_RANK: &str =
    "CASE WHEN p.rank_expires_at <= now() THEN p.previous_rank ELSE p.rank END";

/// How far back an issued punishment makes its issuer staff.
pub const STAFF_ACTIVITY_WINDOW: &str = "interval '30 days'";
