//! The dashboard's dataset: servers with a heartbeat every minute for days, their players'
//! joins and quits, and staff punishments, as one log in time order folded through every read
//! model of the projector ([`READ_MODELS`], the projector's own statements, one transaction
//! per chunk, without the consumer and checkpoints). So the raw samples, the minute,
//! five-minute and hourly rollups, sessions and timeline hold exactly what the projector makes
//! of such a log, pruned by its own retention functions as it goes.
//!
//! Faster than publishing the heartbeats and waiting for the projector: 4.32M heartbeats
//! through ingest would take longer than the rest of the benchmark.

use crate::data::player_name;
use chrono::{DateTime, Duration as Span, DurationRound, Timelike, Utc};
use projector::projections::servers::{prune_rollups, prune_samples};
use projector::projections::{Positioned, READ_MODELS};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::json;
use shared::envelope::{LogMessage, Logged, RecordBatch};
use shared::records::{Heartbeat, Punishment, Session, SessionEvent};
use sqlx::PgPool;
use std::collections::BTreeMap;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

/// Minutes of log per transaction: 2,000 heartbeats with 100 servers, like a projector chunk.
const MINUTES_PER_TRANSACTION: u64 = 20;
/// How often (in minutes of data) the projector's pruning runs while the history is built, so
/// the tables never hold much more than their retention.
const PRUNE_EVERY_MINUTES: u64 = 1_440;
/// Staff members: the first players of the dataset (the skewed head).
pub(crate) const STAFF: usize = 10;
/// The account's sync interval for this dataset: a heartbeat a minute, offline after 3.
pub(crate) const SYNC_INTERVAL_SECONDS: i64 = 60;
/// Log positions of this dataset start far past any other message of the run.
const FIRST_SEQUENCE: u64 = 10_000_000;
/// Live heartbeats while the dashboard is measured.
const LIVE_EVERY: Duration = Duration::from_secs(30);

/// The generator of the log: deterministic, stateful across minutes (sessions open and close).
pub(crate) struct Log {
    account: Uuid,
    /// The servers.
    pub(crate) servers: Vec<Uuid>,
    players: Vec<Uuid>,
    rng: StdRng,
    start: DateTime<Utc>,
    sequence: u64,
    /// Quits due at a minute index: (server, player).
    quits: BTreeMap<u64, Vec<(usize, usize)>>,
    /// Heartbeats folded.
    pub(crate) heartbeats: u64,
    /// Joins, quits and punishments folded.
    pub(crate) activity: u64,
    staff_joined: bool,
}

impl Log {
    /// A log of `servers` servers whose history starts `days` days before now (whole minutes).
    pub(crate) fn new(account: Uuid, players: &[Uuid], servers: usize, days: i64) -> Log {
        let now = Utc::now();
        Log {
            account,
            servers: (0..servers).map(|_| Uuid::new_v4()).collect(),
            players: players.to_vec(),
            rng: StdRng::seed_from_u64(11),
            start: now.duration_trunc(Span::minutes(1)).unwrap_or(now) - Span::days(days),
            sequence: FIRST_SEQUENCE,
            quits: BTreeMap::new(),
            heartbeats: 0,
            activity: 0,
            staff_joined: false,
        }
    }

    /// Whether server `s` is down at minute `m`: 30 minutes every fifth day, at its own time.
    fn down(s: usize, m: u64) -> bool {
        let (day, of_day) = (m / 1_440, m % 1_440);
        let from = (s as u64 * 53) % 1_380;
        (day + s as u64).is_multiple_of(5) && (from..from + 30).contains(&of_day)
    }

    /// Server `s`'s heartbeat at `at`: players follow the time of day, TPS dips for 12 minutes
    /// a day at the server's own time.
    fn heartbeat(&mut self, s: usize, at: DateTime<Utc>) -> Heartbeat {
        let hour = f64::from(at.hour()) + f64::from(at.minute()) / 60.0;
        let capacity = 20 + (s * 37) % 180;
        let wave = 0.55 + 0.45 * ((hour - 20.0) / 24.0 * std::f64::consts::TAU).cos();
        let players = (capacity as f64 * wave + self.rng.random_range(-3.0..3.0)).max(0.0);
        let of_day = i64::from(at.hour()) * 60 + i64::from(at.minute());
        let dip = ((s * 97) % 1_400) as i64;
        let tps = if (dip..dip + 12).contains(&of_day) {
            self.rng.random_range(11.0..16.0)
        } else {
            20.0 - self.rng.random_range(0.0..0.4)
        };
        Heartbeat {
            server_id: self.servers[s],
            tps,
            player_count: players as i64,
            max_players: (capacity * 2) as i64,
            timestamp: Some(at),
            name: Some(format!("bench-{s:03}")),
            version: Some("Paper 1.21.4".into()),
            memory_used_mb: Some(2_048.0 + players * 8.0),
            memory_max_mb: Some(8_192.0),
            online: Some(true),
            role: None,
        }
    }

    fn session(&self, s: usize, p: usize, event: SessionEvent, at: DateTime<Utc>) -> Session {
        Session {
            server_id: self.servers[s],
            player_uuid: self.players[p],
            player_name: player_name(p),
            event,
            at: Some(at),
            client_version: Some("1.21.4".into()),
            ip: None,
            ip_hash: None,
        }
    }

    /// A ban, mute, kick or warning by a staff member (`ban` and `mute` for a week).
    fn punishment(&mut self, s: usize, at: DateTime<Utc>) -> anyhow::Result<Punishment> {
        let staff = self.rng.random_range(0..STAFF);
        // Callers make sure there are more players than staff.
        let player = self.rng.random_range(STAFF..self.players.len());
        let kind = ["ban", "mute", "kick", "warning"][self.rng.random_range(0..4)];
        let reason = ["spam", "griefing", "x-ray", "toxicity"][self.rng.random_range(0..4)];
        let expires = matches!(kind, "ban" | "mute").then(|| at + Span::days(7));
        // From JSON, as a plugin sends it: only the fields a plugin fills.
        Ok(serde_json::from_value(json!({
            "server_id": self.servers[s],
            "player_uuid": self.players[player],
            "player_name": player_name(player),
            "type": kind,
            "reason": reason,
            "staff_uuid": self.players[staff],
            "staff_name": player_name(staff),
            "issued_at": at,
            "expires_at": expires,
        }))?)
    }

    /// The log messages of minute `m`: every server's heartbeat (one batch), then the joins,
    /// quits and punishments of that minute. Each server sees a join an hour, the player
    /// quitting 5 to 40 minutes later, and a punishment every 12 hours.
    fn minute(&mut self, m: u64) -> anyhow::Result<Vec<LogMessage>> {
        let at = self.start + Span::minutes(m as i64);
        let mut beats = Vec::with_capacity(self.servers.len());
        let mut sessions = Vec::new();
        let mut punishments = Vec::new();
        for (s, p) in self.quits.remove(&m).unwrap_or_default() {
            let record = self.session(s, p, SessionEvent::Quit, at);
            sessions.push(logged(record));
        }
        for s in 0..self.servers.len() {
            if Self::down(s, m) {
                continue;
            }
            // Each server beats at its own second of the minute.
            let beat_at = at + Span::seconds((s as i64 * 7) % 50);
            let beat = self.heartbeat(s, beat_at);
            beats.push(logged(beat));
            if (m + s as u64 * 7).is_multiple_of(60) && self.players.len() > STAFF {
                let p = self.rng.random_range(STAFF..self.players.len());
                sessions.push(logged(self.session(s, p, SessionEvent::Join, beat_at)));
                let quit = m + self.rng.random_range(5..40);
                self.quits.entry(quit).or_default().push((s, p));
            }
            if (m + s as u64 * 13).is_multiple_of(720) && self.players.len() > STAFF {
                punishments.push(logged(self.punishment(s, beat_at)?));
            }
        }
        self.heartbeats += beats.len() as u64;
        self.activity += (sessions.len() + punishments.len()) as u64;
        Ok([
            RecordBatch::Heartbeat(beats),
            RecordBatch::Session(sessions),
            RecordBatch::Punishment(punishments),
        ]
        .into_iter()
        .filter(|batch| !batch.is_empty())
        .map(|batch| LogMessage::new(self.account, at, batch))
        .collect())
    }

    /// A live beat of every server at `at`; the first also brings the staff online (a join
    /// each, no quit).
    fn live(&mut self, at: DateTime<Utc>) -> Vec<LogMessage> {
        let beats: Vec<_> = (0..self.servers.len())
            .map(|s| logged(self.heartbeat(s, at)))
            .collect();
        self.heartbeats += beats.len() as u64;
        let mut messages = vec![LogMessage::new(
            self.account,
            at,
            RecordBatch::Heartbeat(beats),
        )];
        if !self.staff_joined && !self.servers.is_empty() {
            self.staff_joined = true;
            let joins: Vec<_> = (0..STAFF.min(self.players.len()))
                .map(|k| logged(self.session(k % self.servers.len(), k, SessionEvent::Join, at)))
                .collect();
            messages.push(LogMessage::new(
                self.account,
                at,
                RecordBatch::Session(joins),
            ));
        }
        messages
    }

    /// Folds `messages` through every read model in one transaction, at the next positions.
    async fn fold(&mut self, pool: &PgPool, messages: Vec<LogMessage>) -> anyhow::Result<()> {
        let positioned: Vec<Positioned> = messages
            .into_iter()
            .map(|message| {
                self.sequence += 1;
                Positioned {
                    stream_sequence: self.sequence,
                    message,
                }
            })
            .collect();
        let refs: Vec<&Positioned> = positioned.iter().collect();
        let mut tx = pool.begin().await?;
        for model in READ_MODELS {
            model.apply(&mut tx, &refs).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Folds the whole history, from its start up to the current minute (catching up with the
    /// clock while it runs), prunes to the retention and refreshes the statistics.
    pub(crate) async fn build(&mut self, pool: &PgPool) -> anyhow::Result<()> {
        let mut m = 0;
        loop {
            let now = Utc::now();
            let mut messages = Vec::new();
            let mut taken = 0;
            while taken < MINUTES_PER_TRANSACTION && self.start + Span::minutes(m as i64 + 1) <= now
            {
                messages.extend(self.minute(m)?);
                m += 1;
                taken += 1;
                if m.is_multiple_of(PRUNE_EVERY_MINUTES) {
                    break;
                }
            }
            if taken == 0 {
                break;
            }
            self.fold(pool, messages).await?;
            if m.is_multiple_of(PRUNE_EVERY_MINUTES) {
                prune(pool).await?;
            }
        }
        while prune(pool).await? > 0 {}
        sqlx::query(
            "VACUUM (ANALYZE) servers, server_samples, server_minutes, server_five_minutes, \
             server_hours, network_five_minutes, sessions, session_server_heartbeats, events, \
             players, punishments",
        )
        .execute(pool)
        .await?;
        Ok(())
    }

    /// Keeps the servers beating (every [`LIVE_EVERY`], through the same fold) until stopped,
    /// so they read as online while the dashboard is measured.
    pub(crate) fn live_until(mut self, pool: PgPool, stop: CancellationToken) -> JoinHandle<Log> {
        tokio::spawn(async move {
            loop {
                let messages = self.live(Utc::now());
                if let Err(error) = self.fold(&pool, messages).await {
                    eprintln!("bench: a live heartbeat failed: {error:#}");
                }
                tokio::select! {
                    () = stop.cancelled() => return self,
                    () = tokio::time::sleep(LIVE_EVERY) => {}
                }
            }
        })
    }
}

/// The rows of each history table for `account`, as `table: rows` (for the report's notes).
pub(crate) async fn row_counts(pool: &PgPool, account: Uuid) -> anyhow::Result<String> {
    let mut counts = Vec::new();
    for table in [
        "server_samples",
        "server_minutes",
        "server_five_minutes",
        "server_hours",
        "network_five_minutes",
        "sessions",
    ] {
        let (rows,): (i64,) = sqlx::query_as(&format!(
            "SELECT count(*) FROM {table} WHERE account_id = $1"
        ))
        .bind(account)
        .fetch_one(pool)
        .await?;
        counts.push(format!("{table}: {rows}"));
    }
    Ok(counts.join(", "))
}

/// One round of the projector's own pruning; returns the rows it deleted.
async fn prune(pool: &PgPool) -> anyhow::Result<u64> {
    let mut conn = pool.acquire().await?;
    Ok(prune_samples(&mut conn).await? + prune_rollups(&mut conn).await?)
}

fn logged<T>(record: T) -> Logged<T> {
    Logged {
        id: Uuid::now_v7(),
        record,
    }
}
