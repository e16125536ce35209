//! The pure part of the servers model: how heartbeats change a server's row, and which of
//! them become raw samples. No I/O, so every rule is unit-tested here.

use chrono::{DateTime, Duration, Utc};
use shared::envelope::{LogMessage, RecordBatch, event_seq};
use shared::records::{Heartbeat, ServerRole};
use std::collections::{BTreeMap, HashSet};
use uuid::Uuid;

/// A server's identity: (account, server id).
pub type ServerKey = (Uuid, Uuid);

/// How far behind its server's latest heartbeat a raw sample is kept. The projector prunes
/// older samples and never samples a heartbeat that old: once pruned, a sample could be
/// inserted (and counted in `server_minutes`) a second time by a replay.
pub const SAMPLE_RETENTION: Duration = Duration::days(1);

/// One row of `servers`.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct ServerRow {
    /// Owning account.
    pub account_id: Uuid,
    /// The server.
    pub id: Uuid,
    /// Display name, from the latest heartbeat that carried one.
    pub name: Option<String>,
    /// Server software and version, likewise.
    pub version: Option<String>,
    /// The latest heartbeat's `online` (false after a graceful shutdown).
    pub online_flag: bool,
    /// The latest heartbeat's role (a game server when it named none).
    #[sqlx(try_from = "String")]
    pub role: ServerRole,
    /// The latest heartbeat's TPS.
    pub tps: Option<f64>,
    /// The latest heartbeat's player count.
    pub player_count: Option<i32>,
    /// The latest heartbeat's capacity.
    pub max_players: Option<i32>,
    /// Memory in use, MiB, from the latest heartbeat that carried it.
    pub memory_used_mb: Option<f64>,
    /// Memory limit, MiB, likewise.
    pub memory_max_mb: Option<f64>,
    /// Earliest heartbeat time.
    pub first_seen: DateTime<Utc>,
    /// Latest heartbeat time.
    pub last_heartbeat_at: DateTime<Utc>,
    /// That heartbeat's log position (breaks ties between equal times).
    pub last_heartbeat_seq: i64,
}

/// One row of `server_samples`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// Owning account.
    pub account_id: Uuid,
    /// The server.
    pub server_id: Uuid,
    /// The heartbeat's time.
    pub at: DateTime<Utc>,
    /// Its TPS.
    pub tps: f64,
    /// Its player count.
    pub player_count: i32,
}

/// A heartbeat with its account, time and place in the log.
#[derive(Debug, Clone, Copy)]
pub struct Beat<'a> {
    /// Owning account.
    pub account_id: Uuid,
    /// The heartbeat's own time (the time of receipt when it had none).
    pub at: DateTime<Utc>,
    /// Its log position ([`event_seq`]).
    pub seq: i64,
    /// The record.
    pub heartbeat: &'a Heartbeat,
}

/// The heartbeats of one log message, in log order.
pub fn beats_of(stream_sequence: u64, message: &LogMessage) -> Vec<Beat<'_>> {
    let RecordBatch::Heartbeat(records) = &message.batch else {
        return Vec::new();
    };
    records
        .iter()
        .enumerate()
        .map(|(index, logged)| Beat {
            account_id: message.account_id,
            at: logged.record.timestamp.unwrap_or(message.received_at),
            seq: event_seq(stream_sequence, index),
            heartbeat: &logged.record,
        })
        .collect()
}

/// What a chunk of heartbeats writes.
#[derive(Debug, Default, PartialEq)]
pub struct Folded {
    /// Rows of `servers` that are new or changed, by key.
    pub servers: Vec<ServerRow>,
    /// Candidate samples, one per (server, time), in log order; the database keeps only those
    /// it does not already hold, and only those reach `server_minutes`.
    pub samples: Vec<Sample>,
}

/// Folds `beats` (in log order) into the stored rows.
pub fn fold(stored: &BTreeMap<ServerKey, ServerRow>, beats: &[Beat<'_>]) -> Folded {
    let mut rows: BTreeMap<ServerKey, ServerRow> = BTreeMap::new();
    let mut sampled = HashSet::new();
    let mut samples = Vec::new();
    for beat in beats {
        let key = (beat.account_id, beat.heartbeat.server_id);
        let row = rows
            .entry(key)
            .or_insert_with(|| stored.get(&key).cloned().unwrap_or_else(|| first(beat)));
        row.beat(beat);
        if beat.at >= row.last_heartbeat_at - SAMPLE_RETENTION && sampled.insert((key, beat.at)) {
            samples.push(Sample {
                account_id: beat.account_id,
                server_id: beat.heartbeat.server_id,
                at: beat.at,
                tps: beat.heartbeat.tps,
                player_count: count(beat.heartbeat.player_count),
            });
        }
    }
    let servers = rows
        .into_iter()
        .filter(|(key, row)| stored.get(key) != Some(row))
        .map(|(_, row)| row)
        .collect();
    Folded { servers, samples }
}

/// Counts are validated >= 0; the column is an integer, so a absurd count saturates.
fn count(n: i64) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// The row of a server never seen before, as of `beat` (which then applies as the newest).
fn first(beat: &Beat<'_>) -> ServerRow {
    ServerRow {
        account_id: beat.account_id,
        id: beat.heartbeat.server_id,
        name: None,
        version: None,
        online_flag: true,
        role: ServerRole::Server,
        tps: None,
        player_count: None,
        max_players: None,
        memory_used_mb: None,
        memory_max_mb: None,
        first_seen: beat.at,
        last_heartbeat_at: beat.at,
        last_heartbeat_seq: i64::MIN,
    }
}

impl ServerRow {
    /// Applies one heartbeat. Status fields move only for a newer heartbeat ((time, log
    /// position) greater than the stored one); name, version and memory come from a newer
    /// heartbeat that carries them, and an older one only fills a gap. So re-applying a
    /// heartbeat, or an older one, changes nothing.
    fn beat(&mut self, beat: &Beat<'_>) {
        let h = beat.heartbeat;
        self.first_seen = self.first_seen.min(beat.at);
        let newer = (beat.at, beat.seq) > (self.last_heartbeat_at, self.last_heartbeat_seq);
        if newer {
            self.online_flag = h.online.unwrap_or(true);
            self.role = h.role.unwrap_or_default();
            self.tps = Some(h.tps);
            self.player_count = Some(count(h.player_count));
            self.max_players = Some(count(h.max_players));
            self.last_heartbeat_at = beat.at;
            self.last_heartbeat_seq = beat.seq;
        }
        fn carry<T: Clone>(field: &mut Option<T>, value: &Option<T>, newer: bool) {
            if value.is_some() && (newer || field.is_none()) {
                field.clone_from(value);
            }
        }
        carry(&mut self.name, &h.name, newer);
        carry(&mut self.version, &h.version, newer);
        carry(&mut self.memory_used_mb, &h.memory_used_mb, newer);
        carry(&mut self.memory_max_mb, &h.memory_max_mb, newer);
    }
}

#[cfg(test)]
#[path = "fold_tests.rs"]
mod tests;
