//! What happens in the network each tick: joins and quits, chat, moderation, purchases.
//!
//! The simulation is pure: it turns a tick into the records to send, and never waits on the
//! network. With a seed, the same ticks give the same records (ids and timestamps aside).

pub(crate) mod content;
mod incidents;
pub(crate) mod moderation;
mod presence;
pub(crate) mod progress;

use crate::records::PunishmentRecord;
use crate::world::World;
use chrono::{DateTime, Utc};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::Value;
use shared::records::RecordKind;

/// The most records in one request (contract §1).
pub const MAX_BATCH: usize = 1_000;

/// Rates per second at speed 1, per player unless noted.
mod rate {
    pub(super) const JOIN: f64 = 1.0 / 150.0;
    pub(super) const QUIT: f64 = 1.0 / 360.0;
    pub(super) const SWITCH: f64 = 1.0 / 300.0;
    pub(super) const CHAT: f64 = 1.0 / 40.0;
    pub(super) const COMMAND: f64 = 1.0 / 75.0;
    pub(super) const CUSTOM_EVENT: f64 = 1.0 / 90.0;
}

/// Records of one kind to send in one request.
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    /// What the records are.
    pub kind: RecordKind,
    /// The records, at most [`MAX_BATCH`].
    pub records: Vec<Value>,
}

/// Where a player is in the quest funnel (quest_started → quest_completed → shop_purchase).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quest {
    Idle,
    Started(usize),
    Completed(usize),
}

#[derive(Debug, Clone)]
struct PlayerState {
    server: Option<usize>,
    muted_until: Option<DateTime<Utc>>,
    banned_until: Option<DateTime<Utc>>,
    group: &'static str,
    discord: Option<u64>,
    quest: Quest,
    vote_streak: u32,
}

#[derive(Debug, Clone)]
struct ServerState {
    online: usize,
    pending_chat: Vec<Value>,
    next_sync: f64,
    tps: f64,
    memory_used_mb: f64,
    /// Restarting (see `incidents`): no heartbeats, no joins.
    down: bool,
}

/// The running network: the world plus who is where, who is muted, what is pending.
#[derive(Debug)]
pub struct Simulation {
    world: World,
    rng: StdRng,
    speed: f64,
    sync_interval: f64,
    clock: f64,
    players: Vec<PlayerState>,
    servers: Vec<ServerState>,
    revocable: Vec<PunishmentRecord>,
    next_external_id: u64,
    outbox: Vec<(RecordKind, Value)>,
    ready: Vec<Batch>,
}

impl Simulation {
    /// A network with everyone offline. `seed` makes the activity reproducible.
    pub fn new(world: World, seed: Option<u64>, speed: f64, sync_interval_secs: u64) -> Self {
        let rng = match seed {
            Some(seed) => StdRng::seed_from_u64(seed ^ 0xAC71_7171),
            None => StdRng::from_os_rng(),
        };
        let sync_interval = sync_interval_secs as f64;
        let server_count = world.servers.len();
        let servers = world
            .servers
            .iter()
            .enumerate()
            .map(|(i, s)| ServerState {
                online: 0,
                pending_chat: Vec::new(),
                // Staggered, so the servers do not all sync in the same second.
                next_sync: sync_interval * (1.0 + i as f64 / server_count as f64),
                tps: 20.0,
                memory_used_mb: f64::from(s.memory_max_mb) * 0.4,
                down: false,
            })
            .collect();
        let players = world
            .players
            .iter()
            .map(|_| PlayerState {
                server: None,
                muted_until: None,
                banned_until: None,
                group: "default",
                discord: None,
                quest: Quest::Idle,
                vote_streak: 0,
            })
            .collect();
        Simulation {
            world,
            rng,
            speed,
            sync_interval,
            clock: 0.0,
            players,
            servers,
            revocable: Vec::new(),
            // litebans ids only grow; starting from the clock keeps them unique across runs.
            next_external_id: Utc::now().timestamp_millis().unsigned_abs(),
            outbox: Vec::new(),
            ready: Vec::new(),
        }
    }

    /// The network being simulated.
    pub fn world(&self) -> &World {
        &self.world
    }

    /// Players online now, over all servers.
    pub fn online_players(&self) -> usize {
        self.servers.iter().map(|s| s.online).sum()
    }

    /// The servers start: a first heartbeat each, staff take their groups and come on duty,
    /// and the evening crowd logs in.
    pub fn start(&mut self, at: DateTime<Utc>) -> Vec<Batch> {
        self.staff_on_duty(at);
        for player in 0..self.players.len() {
            if self.players[player].server.is_none() && self.rng.random_bool(0.6) {
                self.join_somewhere(player, None, at);
            }
        }
        for server in 0..self.servers.len() {
            self.sync(server, true, at);
        }
        self.drain()
    }

    /// Advances the network by `dt` seconds of activity ending at `at`.
    pub fn tick(&mut self, dt: f64, at: DateTime<Utc>) -> Vec<Batch> {
        self.clock += dt;
        for player in 0..self.players.len() {
            self.player_tick(player, dt, at);
        }
        self.moderation_tick(dt, at);
        self.progress_tick(dt, at);
        self.incidents_tick(at);
        for server in 0..self.servers.len() {
            if self.clock >= self.servers[server].next_sync && !self.servers[server].down {
                self.servers[server].next_sync += self.sync_interval;
                self.sync(server, true, at);
            }
        }
        self.drain()
    }

    /// A graceful shutdown: everyone quits, pending chat is flushed, every server says offline.
    pub fn shutdown(&mut self, at: DateTime<Utc>) -> Vec<Batch> {
        for player in 0..self.players.len() {
            self.leave(player, at);
        }
        for server in 0..self.servers.len() {
            self.sync(server, false, at);
        }
        self.drain()
    }

    /// True with the probability of an event of `per_second` rate (times speed) within `dt`.
    fn chance(&mut self, per_second: f64, dt: f64) -> bool {
        let p = per_second * self.speed * dt;
        p >= 1.0 || (p > 0.0 && self.rng.random_bool(p))
    }

    fn emit(&mut self, kind: RecordKind, record: Value) {
        self.outbox.push((kind, record));
    }

    fn player_tick(&mut self, player: usize, dt: f64, at: DateTime<Utc>) {
        let Some(server) = self.players[player].server else {
            let banned = self.players[player]
                .banned_until
                .is_some_and(|until| until > at);
            if !banned && self.chance(rate::JOIN, dt) {
                self.join_somewhere(player, None, at);
            }
            return;
        };
        if self.chance(rate::QUIT, dt) {
            self.leave(player, at);
        } else if self.servers.len() > 1 && self.chance(rate::SWITCH, dt) {
            self.leave(player, at);
            self.join_somewhere(player, Some(server), at);
        } else {
            if self.chance(rate::CHAT, dt) {
                self.say(player, server, at);
            }
            if self.chance(rate::COMMAND, dt) {
                self.run_command(player, server, at);
            }
            if self.chance(rate::CUSTOM_EVENT, dt) {
                self.custom_event(player, server, at);
            }
            self.maybe_flag(player, server, dt, at);
        }
    }

    /// The records made since the last drain: each chat batch, then one request per kind.
    fn drain(&mut self) -> Vec<Batch> {
        let mut by_kind: [Vec<Value>; RecordKind::PLUGIN.len()] = Default::default();
        for (kind, record) in std::mem::take(&mut self.outbox) {
            let slot = RecordKind::PLUGIN
                .iter()
                .position(|k| *k == kind)
                .unwrap_or(0);
            by_kind[slot].push(record);
        }
        let mut batches = std::mem::take(&mut self.ready);
        for (kind, records) in RecordKind::PLUGIN.into_iter().zip(by_kind) {
            batches.extend(chunked(kind, records));
        }
        batches
    }
}

/// Splits `records` into batches of at most [`MAX_BATCH`].
pub(crate) fn chunked(kind: RecordKind, mut records: Vec<Value>) -> Vec<Batch> {
    let mut batches = Vec::new();
    while !records.is_empty() {
        let rest = records.split_off(records.len().min(MAX_BATCH));
        batches.push(Batch {
            kind,
            records: std::mem::replace(&mut records, rest),
        });
    }
    batches
}

#[cfg(test)]
mod tests;
