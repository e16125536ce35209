//! Sessions (contract §5 session and heartbeat, §7 joins, playtime, online status): join/quit
//! pairs per server in `sessions`, closed when the player switches server or the server goes
//! offline, and the model's own last heartbeat per server in `session_server_heartbeats`.
//!
//! Session and heartbeat records are folded together in log order ([`fold`]); the sync
//! interval is the account's `account_settings.sync_interval_seconds` (15 without a row):
//!
//! - `join(id, player, server, at)`: nothing if a session with that id exists; else the
//!   player's open sessions (any server) that joined at or before `at` close at `at`
//!   (`switched`), and a session opens.
//! - `quit(player, server, at)`: the player's open session on that server that joined at or
//!   before `at` closes at `at` (`quit`); with none open, nothing.
//! - `heartbeat(server, at, online)`: with `prev` its stored last heartbeat, if
//!   `at - prev > 3 × interval` the server's open sessions that joined at or before `prev`
//!   close at `prev` (`server_offline`); if `online` is false, its open sessions that joined
//!   at or before `at` close at `at` (`server_offline`); the last heartbeat becomes
//!   `greatest(prev, at)`.
//!
//! A record only closes sessions opened EARLIER in the log than itself (`opened_seq`), a
//! session never reopens, and `left_at >= joined_at` always; so re-applying any record, or an
//! earlier part of the log after later records, changes nothing.
//!
//! # The read side's rule (query-api), so both sides agree
//!
//! The projector closes a silent server's sessions only when its NEXT heartbeat arrives. Until
//! then, reads treat a server as offline when
//! `servers.last_heartbeat_at < now() - 3 × interval` (the account's sync interval, 15 s
//! without a settings row), and show each of its sessions with `left_at IS NULL` as ended at
//! that `last_heartbeat_at` (not online, playtime counted up to it). That is exactly where
//! this model closes them (`left_at = prev`, `closed_by = 'server_offline'`) once the server
//! speaks again, so a session reads the same before and after. A session that joined after
//! that heartbeat (the server went silent right after the join) should read as ended at its
//! `joined_at` so `left >= joined` holds; note the projector leaves such a session open when
//! the server returns (only sessions that joined at or before `prev` close), until the
//! player quits or joins anywhere. A session with `left_at` NULL on a server that is online
//! is live: playtime runs to `now()`.

mod fold;
mod happenings;

pub use fold::{
    ClosedBy, DEFAULT_SYNC_INTERVAL_SECONDS, Folded, Key, MISSED_INTERVALS, SessionRow, Stored,
    fold, offline_after,
};
pub use happenings::{Happening, happenings_of};

use super::Positioned;
use chrono::{DateTime, Utc};
use sqlx::PgConnection;
use std::collections::BTreeSet;
use uuid::Uuid;

/// Keys or rows per statement: batched, yet bounded so one statement's parameters stay small.
const ROWS_PER_STATEMENT: usize = 2_000;

/// Join/quit pairs per server, closed when a server goes offline.
#[derive(Debug, Clone, Copy)]
pub struct Sessions;

read_model! {
    Sessions: "sessions",
    tables: ["sessions", "session_server_heartbeats"],
    // Each chunk's open sessions of its players and servers (`load`).
    load_indexes: ["sessions_open_by_player_idx", "sessions_open_by_server_idx"],
    fold: apply
}

/// Folds the session and heartbeat records of `messages` into the sessions tables; returns
/// the rows written.
pub(crate) async fn apply(
    conn: &mut PgConnection,
    messages: &[&Positioned],
) -> Result<u64, sqlx::Error> {
    let happenings: Vec<Happening<'_>> = messages
        .iter()
        .flat_map(|m| happenings_of(m.stream_sequence, &m.message))
        .collect();
    if happenings.is_empty() {
        return Ok(0);
    }
    let stored = load(conn, &happenings).await?;
    let folded = fold(stored, &happenings);
    let mut written = 0;
    for batch in folded.opened.chunks(ROWS_PER_STATEMENT) {
        written += insert(conn, batch).await?;
    }
    for batch in folded.closed.chunks(ROWS_PER_STATEMENT) {
        written += close(conn, batch).await?;
    }
    for batch in folded.heartbeats.chunks(ROWS_PER_STATEMENT) {
        written += store_heartbeats(conn, batch).await?;
    }
    Ok(written)
}

/// The state the chunk's records need, with one set-based SELECT per kind of state.
async fn load(
    conn: &mut PgConnection,
    happenings: &[Happening<'_>],
) -> Result<Stored, sqlx::Error> {
    let (mut players, mut servers, mut join_ids, mut accounts) =
        <(BTreeSet<Key>, BTreeSet<Key>, BTreeSet<Key>, BTreeSet<Uuid>)>::default();
    for happening in happenings {
        match *happening {
            Happening::Join {
                account_id,
                id,
                player,
                ..
            } => {
                players.insert((account_id, player));
                join_ids.insert((account_id, id));
            }
            Happening::Quit {
                account_id, player, ..
            } => {
                players.insert((account_id, player));
            }
            Happening::Heartbeat {
                account_id, server, ..
            } => {
                servers.insert((account_id, server));
                accounts.insert(account_id);
            }
        }
    }
    let mut stored = Stored::default();
    let accounts: Vec<Uuid> = accounts.into_iter().collect();
    for batch in accounts.chunks(ROWS_PER_STATEMENT) {
        let rows: Vec<(Uuid, i32)> = sqlx::query_as(
            "SELECT account_id, sync_interval_seconds FROM account_settings
             WHERE account_id = ANY($1)",
        )
        .bind(batch)
        .fetch_all(&mut *conn)
        .await?;
        stored.sync_intervals.extend(rows);
    }
    let servers: Vec<Key> = servers.into_iter().collect();
    for batch in servers.chunks(ROWS_PER_STATEMENT) {
        let (accounts, ids) = unzip(batch);
        let rows: Vec<(Uuid, Uuid, DateTime<Utc>)> = sqlx::query_as(
            "SELECT h.account_id, h.server_id, h.last_heartbeat_at
             FROM session_server_heartbeats h
             JOIN UNNEST($1::uuid[], $2::uuid[]) AS k(account_id, server_id)
               ON h.account_id = k.account_id AND h.server_id = k.server_id",
        )
        .bind(accounts)
        .bind(ids)
        .fetch_all(&mut *conn)
        .await?;
        let rows = rows.into_iter().map(|(a, s, at)| ((a, s), at));
        stored.last_heartbeats.extend(rows);
    }
    // Open sessions of the chunk's players (joins, quits) and servers (heartbeats), each
    // through its partial index; a session found both ways comes once (UNION).
    let players: Vec<Key> = players.into_iter().collect();
    let batches = players
        .len()
        .max(servers.len())
        .div_ceil(ROWS_PER_STATEMENT);
    for i in 0..batches {
        let part = |keys: &[Key]| {
            let from = (i * ROWS_PER_STATEMENT).min(keys.len());
            unzip(&keys[from..(from + ROWS_PER_STATEMENT).min(keys.len())])
        };
        let ((player_accounts, player_ids), (server_accounts, server_ids)) =
            (part(&players), part(&servers));
        let rows: Vec<SessionRow> = sqlx::query_as(
            "SELECT s.account_id, s.id, s.player_uuid, s.server_id, s.joined_at, s.opened_seq
             FROM sessions s
             JOIN UNNEST($1::uuid[], $2::uuid[]) AS k(account_id, player_uuid)
               ON s.account_id = k.account_id AND s.player_uuid = k.player_uuid
             WHERE s.left_at IS NULL
             UNION
             SELECT s.account_id, s.id, s.player_uuid, s.server_id, s.joined_at, s.opened_seq
             FROM sessions s
             JOIN UNNEST($3::uuid[], $4::uuid[]) AS k(account_id, server_id)
               ON s.account_id = k.account_id AND s.server_id = k.server_id
             WHERE s.left_at IS NULL",
        )
        .bind(player_accounts)
        .bind(player_ids)
        .bind(server_accounts)
        .bind(server_ids)
        .fetch_all(&mut *conn)
        .await?;
        stored.open.extend(rows);
    }
    // Open sessions found by both batches' halves would repeat across batches; keep one.
    stored.open.sort_unstable_by_key(|s| (s.account_id, s.id));
    stored.open.dedup_by_key(|s| (s.account_id, s.id));
    let join_ids: Vec<Key> = join_ids.into_iter().collect();
    for batch in join_ids.chunks(ROWS_PER_STATEMENT) {
        let (accounts, ids) = unzip(batch);
        let rows: Vec<(Uuid, Uuid)> = sqlx::query_as(
            "SELECT s.account_id, s.id FROM sessions s
             JOIN UNNEST($1::uuid[], $2::uuid[]) AS k(account_id, id)
               ON s.account_id = k.account_id AND s.id = k.id",
        )
        .bind(accounts)
        .bind(ids)
        .fetch_all(&mut *conn)
        .await?;
        stored.known_ids.extend(rows);
    }
    Ok(stored)
}

fn unzip(keys: &[Key]) -> (Vec<Uuid>, Vec<Uuid>) {
    keys.iter().copied().unzip()
}

fn col<'a, T>(rows: &'a [SessionRow], f: impl Fn(&'a SessionRow) -> T) -> Vec<T> {
    rows.iter().map(f).collect()
}

/// Inserts the sessions a chunk opened (closed already when the chunk closed them); a
/// stored id is kept as is.
async fn insert(conn: &mut PgConnection, rows: &[SessionRow]) -> Result<u64, sqlx::Error> {
    let result = sqlx::query(
        "INSERT INTO sessions (account_id, id, player_uuid, server_id, joined_at, left_at,
                              closed_by, client_version, ip_hash, opened_seq)
         SELECT * FROM UNNEST($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[],
                              $5::timestamptz[], $6::timestamptz[], $7::text[], $8::text[],
                              $9::text[], $10::bigint[])
         ON CONFLICT (account_id, id) DO NOTHING",
    )
    .bind(col(rows, |r| r.account_id))
    .bind(col(rows, |r| r.id))
    .bind(col(rows, |r| r.player_uuid))
    .bind(col(rows, |r| r.server_id))
    .bind(col(rows, |r| r.joined_at))
    .bind(col(rows, |r| r.left_at))
    .bind(col(rows, |r| r.closed_by.map(ClosedBy::as_str)))
    .bind(col(rows, |r| r.client_version.as_deref()))
    .bind(col(rows, |r| r.ip_hash.as_deref()))
    .bind(col(rows, |r| r.opened_seq))
    .execute(conn)
    .await?;
    Ok(result.rows_affected())
}

/// Closes stored sessions, each only if still open and joined at or before its `left_at`.
async fn close(conn: &mut PgConnection, rows: &[SessionRow]) -> Result<u64, sqlx::Error> {
    let result = sqlx::query(
        "UPDATE sessions s SET left_at = c.left_at, closed_by = c.closed_by
         FROM UNNEST($1::uuid[], $2::uuid[], $3::timestamptz[], $4::text[])
              AS c(account_id, id, left_at, closed_by)
         WHERE s.account_id = c.account_id AND s.id = c.id
           AND s.left_at IS NULL AND s.joined_at <= c.left_at",
    )
    .bind(col(rows, |r| r.account_id))
    .bind(col(rows, |r| r.id))
    .bind(col(rows, |r| r.left_at))
    .bind(col(rows, |r| r.closed_by.map(ClosedBy::as_str)))
    .execute(conn)
    .await?;
    Ok(result.rows_affected())
}

/// Moves each server's last heartbeat forward (never back).
async fn store_heartbeats(
    conn: &mut PgConnection,
    rows: &[(Uuid, Uuid, DateTime<Utc>)],
) -> Result<u64, sqlx::Error> {
    let result = sqlx::query(
        "INSERT INTO session_server_heartbeats AS h (account_id, server_id, last_heartbeat_at)
         SELECT * FROM UNNEST($1::uuid[], $2::uuid[], $3::timestamptz[])
         ON CONFLICT (account_id, server_id) DO UPDATE
            SET last_heartbeat_at = EXCLUDED.last_heartbeat_at
            WHERE EXCLUDED.last_heartbeat_at > h.last_heartbeat_at",
    )
    .bind(rows.iter().map(|r| r.0).collect::<Vec<_>>())
    .bind(rows.iter().map(|r| r.1).collect::<Vec<_>>())
    .bind(rows.iter().map(|r| r.2).collect::<Vec<_>>())
    .execute(conn)
    .await?;
    Ok(result.rows_affected())
}
