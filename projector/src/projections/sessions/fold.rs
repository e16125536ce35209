//! The pure part of the sessions model: joins, quits and heartbeats folded in log order over
//! the open sessions and last heartbeats loaded for a chunk. No I/O, so every rule is
//! unit-tested here.

use super::happenings::Happening;
use chrono::{DateTime, Duration, Utc};
use std::collections::{HashMap, HashSet};
use uuid::Uuid;

/// (account, player) or (account, server): everything is per account.
pub type Key = (Uuid, Uuid);

/// The sync interval of an account without a settings row (contract §5).
pub const DEFAULT_SYNC_INTERVAL_SECONDS: i32 = 15;

/// A server is offline after this many sync intervals without a heartbeat.
pub const MISSED_INTERVALS: i32 = 3;

/// How a session ended (`sessions.closed_by`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClosedBy {
    /// The player quit.
    Quit,
    /// The player joined a server (this one again, or another) while it was open.
    Switched,
    /// The server went offline: a graceful-shutdown heartbeat, or a heartbeat gap.
    ServerOffline,
}

impl ClosedBy {
    /// The column's value.
    pub fn as_str(self) -> &'static str {
        match self {
            ClosedBy::Quit => "quit",
            ClosedBy::Switched => "switched",
            ClosedBy::ServerOffline => "server_offline",
        }
    }
}

/// A session as the fold sees it.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct SessionRow {
    /// Owning account.
    pub account_id: Uuid,
    /// The join record's event id.
    pub id: Uuid,
    /// The player.
    pub player_uuid: Uuid,
    /// The server.
    pub server_id: Uuid,
    /// When the player joined.
    pub joined_at: DateTime<Utc>,
    /// The join record's log position.
    pub opened_seq: i64,
    /// When it ended; None while open.
    #[sqlx(skip)]
    pub left_at: Option<DateTime<Utc>>,
    /// How it ended.
    #[sqlx(skip)]
    pub closed_by: Option<ClosedBy>,
    /// Client version (only for sessions opened by this chunk; stored ones are not reloaded).
    #[sqlx(skip)]
    pub client_version: Option<String>,
    /// Keyed IP hash (likewise).
    #[sqlx(skip)]
    pub ip_hash: Option<String>,
}

/// What the fold starts from: the state of the accounts, servers and players a chunk names.
#[derive(Debug, Default)]
pub struct Stored {
    /// `account_settings.sync_interval_seconds`, for accounts that have a row.
    pub sync_intervals: HashMap<Uuid, i32>,
    /// `session_server_heartbeats.last_heartbeat_at` by (account, server).
    pub last_heartbeats: HashMap<Key, DateTime<Utc>>,
    /// Open sessions of the chunk's players and servers.
    pub open: Vec<SessionRow>,
    /// (account, id) of the chunk's join ids that are already stored, open or closed.
    pub known_ids: HashSet<Key>,
}

/// What a chunk writes.
#[derive(Debug, Default, PartialEq)]
pub struct Folded {
    /// Sessions opened by the chunk (some already closed by it), in log order.
    pub opened: Vec<SessionRow>,
    /// Stored sessions the chunk closed, with their `left_at` and `closed_by` set.
    pub closed: Vec<SessionRow>,
    /// Last heartbeats that moved: (account, server, last_heartbeat_at).
    pub heartbeats: Vec<(Uuid, Uuid, DateTime<Utc>)>,
}

/// The sessions being folded, indexed by player and by server.
struct Open {
    sessions: Vec<(SessionRow, bool)>,
    by_player: HashMap<Key, Vec<usize>>,
    by_server: HashMap<Key, Vec<usize>>,
}

impl Open {
    fn track(&mut self, session: SessionRow, is_new: bool) {
        let index = self.sessions.len();
        let (account, player, server) =
            (session.account_id, session.player_uuid, session.server_id);
        self.by_player
            .entry((account, player))
            .or_default()
            .push(index);
        self.by_server
            .entry((account, server))
            .or_default()
            .push(index);
        self.sessions.push((session, is_new));
    }

    /// Closes, at `at`, the open sessions in `indexes` that `close` picks, that joined at or
    /// before `at`, and that were opened EARLIER in the log than the record at `seq`: a
    /// record re-applied after a later join never reaches back to close it.
    fn close(
        sessions: &mut [(SessionRow, bool)],
        indexes: Option<&mut Vec<usize>>,
        seq: i64,
        at: DateTime<Utc>,
        closed_by: ClosedBy,
        close: impl Fn(&SessionRow) -> bool,
    ) {
        let Some(indexes) = indexes else { return };
        indexes.retain(|&index| {
            let session = &mut sessions[index].0;
            if session.left_at.is_some() {
                return false;
            }
            if session.joined_at <= at && session.opened_seq < seq && close(session) {
                session.left_at = Some(at);
                session.closed_by = Some(closed_by);
                return false;
            }
            true
        });
    }
}

/// Folds `happenings` (in log order) over `stored`. Every effect is guarded by the state, so
/// re-applying any record, or an earlier part of the log, yields nothing to write.
pub fn fold(stored: Stored, happenings: &[Happening<'_>]) -> Folded {
    let mut open = Open {
        sessions: Vec::with_capacity(stored.open.len()),
        by_player: HashMap::new(),
        by_server: HashMap::new(),
    };
    let mut ids = stored.known_ids;
    for session in stored.open {
        ids.insert((session.account_id, session.id));
        open.track(session, false);
    }
    let mut last_heartbeats = stored.last_heartbeats.clone();
    for happening in happenings {
        match *happening {
            Happening::Join {
                account_id,
                id,
                seq,
                player,
                server,
                at,
                client_version,
                ip_hash,
            } => {
                if !ids.insert((account_id, id)) {
                    continue;
                }
                let players = open.by_player.get_mut(&(account_id, player));
                Open::close(
                    &mut open.sessions,
                    players,
                    seq,
                    at,
                    ClosedBy::Switched,
                    |_| true,
                );
                let session = SessionRow {
                    account_id,
                    id,
                    player_uuid: player,
                    server_id: server,
                    joined_at: at,
                    opened_seq: seq,
                    left_at: None,
                    closed_by: None,
                    client_version: client_version.map(str::to_owned),
                    ip_hash: ip_hash.map(str::to_owned),
                };
                open.track(session, true);
            }
            Happening::Quit {
                account_id,
                seq,
                player,
                server,
                at,
            } => {
                let players = open.by_player.get_mut(&(account_id, player));
                Open::close(&mut open.sessions, players, seq, at, ClosedBy::Quit, |s| {
                    s.server_id == server
                });
            }
            Happening::Heartbeat {
                account_id,
                seq,
                server,
                at,
                online,
            } => {
                let key = (account_id, server);
                let previous = last_heartbeats.get(&key).copied();
                if let Some(previous) = previous
                    && at - previous > offline_after(&stored.sync_intervals, account_id)
                {
                    let servers = open.by_server.get_mut(&key);
                    let offline = ClosedBy::ServerOffline;
                    Open::close(&mut open.sessions, servers, seq, previous, offline, |_| {
                        true
                    });
                }
                if !online {
                    let servers = open.by_server.get_mut(&key);
                    let offline = ClosedBy::ServerOffline;
                    Open::close(&mut open.sessions, servers, seq, at, offline, |_| true);
                }
                last_heartbeats.insert(key, previous.map_or(at, |p| p.max(at)));
            }
        }
    }
    let mut folded = Folded::default();
    for (session, is_new) in open.sessions {
        if is_new {
            folded.opened.push(session);
        } else if session.left_at.is_some() {
            folded.closed.push(session);
        }
    }
    folded.heartbeats = last_heartbeats
        .into_iter()
        .filter(|(key, at)| stored.last_heartbeats.get(key) != Some(at))
        .map(|((account, server), at)| (account, server, at))
        .collect();
    folded.heartbeats.sort_unstable();
    folded
}

/// How long without a heartbeat makes an account's server offline.
pub fn offline_after(sync_intervals: &HashMap<Uuid, i32>, account_id: Uuid) -> Duration {
    let interval = sync_intervals
        .get(&account_id)
        .copied()
        .unwrap_or(DEFAULT_SYNC_INTERVAL_SECONDS);
    Duration::seconds(i64::from(interval) * i64::from(MISSED_INTERVALS))
}

#[cfg(test)]
#[path = "fold_tests.rs"]
mod tests;
