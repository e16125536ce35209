//! Who is where: joins, quits, and each server's sync (its chat batch and heartbeat).

use super::{Simulation, chunked};
use crate::records::{self, Status};
use chrono::{DateTime, Utc};
use rand::Rng;
use shared::records::RecordKind;

impl Simulation {
    /// Joins a server that has room, weighted by popularity (never `except`).
    pub(super) fn join_somewhere(
        &mut self,
        player: usize,
        except: Option<usize>,
        at: DateTime<Utc>,
    ) {
        let weights: Vec<f64> = (0..self.servers.len())
            .map(|s| {
                let full = self.servers[s].online >= self.world.servers[s].max_players as usize;
                if full || self.servers[s].down || Some(s) == except {
                    0.0
                } else {
                    self.world.servers[s].popularity
                }
            })
            .collect();
        let total: f64 = weights.iter().sum();
        if total <= 0.0 {
            return;
        }
        let mut pick = self.rng.random_range(0.0..total);
        let server = weights
            .iter()
            .position(|w| {
                pick -= w;
                pick < 0.0
            })
            // Rounding can leave a sliver past the end: take the last server with room.
            .or_else(|| weights.iter().rposition(|w| *w > 0.0))
            .unwrap_or(0);
        self.players[player].server = Some(server);
        self.servers[server].online += 1;
        let record = records::session(
            &self.world.servers[server],
            &self.world.players[player],
            true,
            at,
        );
        self.emit(RecordKind::Session, record);
    }

    /// Quits the player's server, if they are online.
    pub(super) fn leave(&mut self, player: usize, at: DateTime<Utc>) {
        let Some(server) = self.players[player].server.take() else {
            return;
        };
        self.servers[server].online = self.servers[server].online.saturating_sub(1);
        let record = records::session(
            &self.world.servers[server],
            &self.world.players[player],
            false,
            at,
        );
        self.emit(RecordKind::Session, record);
    }

    /// Staff take their permission groups (so the dashboard counts them as staff) and join:
    /// there is always someone on duty.
    pub(super) fn staff_on_duty(&mut self, at: DateTime<Utc>) {
        let staff: Vec<usize> = self.world.staff().collect();
        for player in staff {
            let Some(role) = self.world.players[player].staff else {
                continue;
            };
            let previous = self.players[player].group;
            self.players[player].group = role.group();
            let p = &self.world.players[player];
            let record = records::rank_change(p, "set", role.group(), Some(previous), None, at);
            self.emit(RecordKind::RankChange, record);
            self.join_somewhere(player, None, at);
        }
    }

    /// A server's sync: its chat batch since the last sync, then its heartbeat.
    pub(super) fn sync(&mut self, server: usize, online: bool, at: DateTime<Utc>) {
        // Chat goes as one batch per server and sync, like the plugin sends it.
        let chat = std::mem::take(&mut self.servers[server].pending_chat);
        self.ready.extend(chunked(RecordKind::Chat, chat));
        let max = f64::from(self.world.servers[server].memory_max_mb);
        let lagging = self.lagging(server);
        let state = &mut self.servers[server];
        // Mostly a healthy 20 tps, with the occasional lag spike, and a dip now and then.
        state.tps = if lagging {
            self.rng.random_range(12.0..16.0)
        } else if self.rng.random_bool(0.05) {
            self.rng.random_range(11.0..18.5)
        } else {
            self.rng.random_range(19.6..=20.0)
        };
        let drift = self.rng.random_range(-0.05..0.06) * max;
        state.memory_used_mb = (state.memory_used_mb + drift).clamp(0.25 * max, 0.9 * max);
        let status = Status {
            tps: state.tps,
            player_count: state.online,
            memory_used_mb: state.memory_used_mb.round() as u32,
            online,
        };
        let record = records::heartbeat(&self.world.servers[server], status, at);
        self.emit(RecordKind::Heartbeat, record);
    }
}
