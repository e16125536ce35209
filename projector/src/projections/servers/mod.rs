//! Servers (contract §5 heartbeat, §7 servers): each server's status (its role included: a
//! game server or a proxy) from its heartbeats in `servers`, raw TPS / player-count samples
//! for a day in `server_samples`, and min / avg / max rollups per minute and per five minutes
//! (kept 8 days) and per hour (kept 400 days) in `server_minutes`, `server_five_minutes` and
//! `server_hours` ([`history`]), and the network's players per five minutes (game servers
//! summed, proxies left out) in `network_five_minutes` ([`network`]).
//!
//! Per chunk: one SELECT loads the servers the chunk's heartbeats name, the heartbeats are
//! folded in memory in log order ([`fold`]), one UNNEST upsert writes the servers that
//! changed, and one statement inserts the samples `ON CONFLICT DO NOTHING` and folds exactly
//! the rows it inserted (its `RETURNING`) into every rollup: a heartbeat logged or applied
//! twice is sampled and counted once.
//!
//! Pruning: at most once a minute per process (a process-wide last-pruned instant), `apply`
//! deletes samples more than [`SAMPLE_RETENTION`] older than their server's latest heartbeat
//! (for a live server, "older than a day"), and rollup rows past their own retention. The horizon is the data's own time, not the
//! wall clock, and [`fold`] never samples a heartbeat beyond it, so a replay can never
//! insert a pruned sample again and count it twice. The instant is taken before the
//! chunk commits; if the chunk rolls back, the next prune just comes a minute later.

mod fold;
mod history;
mod network;

pub use fold::{Beat, Folded, SAMPLE_RETENTION, Sample, ServerKey, ServerRow, beats_of, fold};
pub use history::{HOUR_RETENTION, MINUTE_RETENTION, prune_rollups, prune_samples};

use super::Positioned;
use sqlx::PgConnection;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};
use uuid::Uuid;

/// Rows per statement: batched, yet bounded so one statement's parameters stay small.
const ROWS_PER_STATEMENT: usize = 2_000;

/// How often samples are pruned at most.
const PRUNE_EVERY: Duration = Duration::from_secs(60);

/// When this process last pruned samples.
static LAST_PRUNED: Mutex<Option<Instant>> = Mutex::new(None);

/// Server status and TPS / player-count history from heartbeats.
#[derive(Debug, Clone, Copy)]
pub struct Servers;

read_model! {
    Servers: "servers",
    tables: [
        "servers",
        "server_samples",
        "server_minutes",
        "server_five_minutes",
        "server_hours",
        "network_five_minutes",
    ],
    fold: apply
}

/// Folds the heartbeats of `messages` into the servers tables; returns the rows written.
pub(crate) async fn apply(
    conn: &mut PgConnection,
    messages: &[&Positioned],
) -> Result<u64, sqlx::Error> {
    let beats: Vec<Beat<'_>> = messages
        .iter()
        .flat_map(|m| beats_of(m.stream_sequence, &m.message))
        .collect();
    let mut written = 0;
    if !beats.is_empty() {
        let keys: BTreeSet<ServerKey> = beats
            .iter()
            .map(|b| (b.account_id, b.heartbeat.server_id))
            .collect();
        let keys: Vec<ServerKey> = keys.into_iter().collect();
        let mut stored = BTreeMap::new();
        for batch in keys.chunks(ROWS_PER_STATEMENT) {
            for row in load(conn, batch).await? {
                stored.insert((row.account_id, row.id), row);
            }
        }
        let folded = fold(&stored, &beats);
        for batch in folded.servers.chunks(ROWS_PER_STATEMENT) {
            written += upsert(conn, batch).await?;
        }
        for batch in folded.samples.chunks(ROWS_PER_STATEMENT) {
            written += history::sample(conn, batch).await?;
        }
        // The network chart's buckets this chunk touched, and all of a server's whose role
        // moved (a proxy's players leave the sums, a game server's enter them).
        let role_changed: Vec<ServerKey> = folded
            .servers
            .iter()
            .filter(|row| {
                stored
                    .get(&(row.account_id, row.id))
                    .is_some_and(|old: &ServerRow| old.role != row.role)
            })
            .map(|row| (row.account_id, row.id))
            .collect();
        let sampled: BTreeSet<(Uuid, chrono::DateTime<chrono::Utc>)> = folded
            .samples
            .iter()
            .map(|s| (s.account_id, s.at))
            .collect();
        let sampled: Vec<_> = sampled.into_iter().collect();
        let mut changed = role_changed.as_slice();
        for batch in sampled.chunks(ROWS_PER_STATEMENT) {
            written += network::refresh(conn, batch, std::mem::take(&mut changed)).await?;
        }
        written += network::refresh(conn, &[], changed).await?;
    }
    if prune_due(&LAST_PRUNED, Instant::now()) {
        let samples = prune_samples(conn).await?;
        let rollups = prune_rollups(conn).await?;
        tracing::debug!(samples, rollups, "pruned server history");
    }
    Ok(written)
}

/// True (and the instant taken) when the last prune was [`PRUNE_EVERY`] ago or never.
fn prune_due(last: &Mutex<Option<Instant>>, now: Instant) -> bool {
    // A poisoned lock only means another thread panicked while holding an Instant.
    let mut last = last.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if last.is_some_and(|at| now.saturating_duration_since(at) < PRUNE_EVERY) {
        return false;
    }
    *last = Some(now);
    true
}

async fn load(conn: &mut PgConnection, keys: &[ServerKey]) -> Result<Vec<ServerRow>, sqlx::Error> {
    let (accounts, servers): (Vec<Uuid>, Vec<Uuid>) = keys.iter().copied().unzip();
    sqlx::query_as(
        "SELECT s.account_id, s.id, s.name, s.version, s.online_flag, s.role, s.tps, s.player_count,
                s.max_players, s.memory_used_mb, s.memory_max_mb, s.first_seen,
                s.last_heartbeat_at, s.last_heartbeat_seq
         FROM servers s
         JOIN UNNEST($1::uuid[], $2::uuid[]) AS k(account_id, id)
           ON s.account_id = k.account_id AND s.id = k.id",
    )
    .bind(accounts)
    .bind(servers)
    .fetch_all(conn)
    .await
}

/// "This heartbeat is newer than the stored one": (time, log position) is greater.
const NEWER: &str = "(EXCLUDED.last_heartbeat_at, EXCLUDED.last_heartbeat_seq)
    > (s.last_heartbeat_at, s.last_heartbeat_seq)";

/// The upsert of `servers` (see [`upsert`]).
static UPSERT: LazyLock<String> = LazyLock::new(|| {
    format!(
        "INSERT INTO servers AS s (account_id, id, name, version, online_flag, tps, player_count,
                max_players, memory_used_mb, memory_max_mb, first_seen, last_heartbeat_at,
                last_heartbeat_seq, role)
         SELECT * FROM UNNEST($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::boolean[],
                $6::float8[], $7::int4[], $8::int4[], $9::float8[], $10::float8[],
                $11::timestamptz[], $12::timestamptz[], $13::bigint[], $14::text[])
         ON CONFLICT (account_id, id) DO UPDATE SET
            first_seen = LEAST(s.first_seen, EXCLUDED.first_seen),
            online_flag = CASE WHEN {newer} THEN EXCLUDED.online_flag ELSE s.online_flag END,
            role = CASE WHEN {newer} THEN EXCLUDED.role ELSE s.role END,
            tps = CASE WHEN {newer} THEN EXCLUDED.tps ELSE s.tps END,
            player_count = CASE WHEN {newer} THEN EXCLUDED.player_count ELSE s.player_count END,
            max_players = CASE WHEN {newer} THEN EXCLUDED.max_players ELSE s.max_players END,
            last_heartbeat_at = CASE WHEN {newer} THEN EXCLUDED.last_heartbeat_at
                                ELSE s.last_heartbeat_at END,
            last_heartbeat_seq = CASE WHEN {newer} THEN EXCLUDED.last_heartbeat_seq
                                 ELSE s.last_heartbeat_seq END,
            name = CASE WHEN {newer} THEN EXCLUDED.name ELSE coalesce(s.name, EXCLUDED.name) END,
            version = CASE WHEN {newer} THEN EXCLUDED.version
                      ELSE coalesce(s.version, EXCLUDED.version) END,
            memory_used_mb = CASE WHEN {newer} THEN EXCLUDED.memory_used_mb
                             ELSE coalesce(s.memory_used_mb, EXCLUDED.memory_used_mb) END,
            memory_max_mb = CASE WHEN {newer} THEN EXCLUDED.memory_max_mb
                            ELSE coalesce(s.memory_max_mb, EXCLUDED.memory_max_mb) END",
        newer = NEWER
    )
});

/// Writes folded rows. Status moves only for a newer heartbeat; name, version and memory
/// take the folded value from a newer heartbeat and otherwise only fill a gap.
async fn upsert(conn: &mut PgConnection, rows: &[ServerRow]) -> Result<u64, sqlx::Error> {
    fn col<'a, T>(rows: &'a [ServerRow], f: impl Fn(&'a ServerRow) -> T) -> Vec<T> {
        rows.iter().map(f).collect()
    }
    let result = sqlx::query(UPSERT.as_str())
        .bind(col(rows, |r| r.account_id))
        .bind(col(rows, |r| r.id))
        .bind(col(rows, |r| r.name.as_deref()))
        .bind(col(rows, |r| r.version.as_deref()))
        .bind(col(rows, |r| r.online_flag))
        .bind(col(rows, |r| r.tps))
        .bind(col(rows, |r| r.player_count))
        .bind(col(rows, |r| r.max_players))
        .bind(col(rows, |r| r.memory_used_mb))
        .bind(col(rows, |r| r.memory_max_mb))
        .bind(col(rows, |r| r.first_seen))
        .bind(col(rows, |r| r.last_heartbeat_at))
        .bind(col(rows, |r| r.last_heartbeat_seq))
        .bind(col(rows, |r| r.role.as_str()))
        .execute(conn)
        .await?;
    Ok(result.rows_affected())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pruning_is_due_at_first_then_at_most_once_a_minute() {
        let last = Mutex::new(None);
        let start = Instant::now();
        assert!(prune_due(&last, start));
        assert!(!prune_due(&last, start + Duration::from_secs(59)));
        assert!(prune_due(&last, start + Duration::from_secs(60)));
        assert!(!prune_due(&last, start + Duration::from_secs(61)));
        // A clock that appears to go backwards does not prune again.
        assert!(!prune_due(&last, start));
    }
}
