//! Anti-cheat flags, punishments by staff, and revokes of earlier punishments.

use super::Simulation;
use super::content::pick;
use crate::records::{self, Flag, PunishmentRecord};
use chrono::{DateTime, Duration, Utc};
use rand::Rng;
use shared::records::RecordKind;

/// Rates per second at speed 1.
mod rate {
    /// Flags per online player who plays fair (false positives).
    pub(super) const FLAG: f64 = 1.0 / 1800.0;
    /// Flags per online suspicious player.
    pub(super) const FLAG_SUSPICIOUS: f64 = 1.0 / 40.0;
    /// Punishments per online player.
    pub(super) const PUNISH: f64 = 1.0 / 2400.0;
    /// Revokes per active ban or mute.
    pub(super) const REVOKE: f64 = 1.0 / 600.0;
}

/// (check name, check type, what the detail says, unit range).
pub(crate) const CHECKS: &[(&str, &str, &str, f64, f64)] = &[
    ("Reach", "A", "distance", 3.05, 4.2),
    ("Fly", "B", "airTicks", 20.0, 90.0),
    ("KillAura", "C", "angle", 35.0, 170.0),
    ("Speed", "A", "speed", 0.29, 0.6),
    ("Timer", "A", "balance", 55.0, 250.0),
    ("AutoClicker", "B", "cps", 16.0, 28.0),
];

pub(crate) const WARNINGS: &[&str] = &[
    "Spam",
    "Inappropriate language",
    "Caps abuse",
    "Begging for items",
];
pub(crate) const MUTES: &[(&str, i64)] = &[("Spam", 1), ("Toxicity", 24), ("Advertising", 168)];
pub(crate) const KICKS: &[&str] = &["AFK farming", "Please read /rules", "Glitch abuse"];
pub(crate) const BANS: &[(&str, i64)] = &[
    ("Griefing", 7),
    ("Exploiting", 14),
    ("Alt of a banned player", 0),
];
const REVOKE_REASONS: &[&str] = &[
    "Appeal accepted",
    "False positive",
    "Wrong player",
    "Time served",
];

impl Simulation {
    /// An anti-cheat check fires, now and then; far more often for a cheater.
    pub(super) fn maybe_flag(&mut self, player: usize, server: usize, dt: f64, at: DateTime<Utc>) {
        let suspicious = self.world.players[player].suspicious;
        let rate = if suspicious {
            rate::FLAG_SUSPICIOUS
        } else {
            rate::FLAG
        };
        if !self.chance(rate, dt) {
            return;
        }
        let (check_name, check_type, unit, low, high) = pick(&mut self.rng, CHECKS);
        let value = self.rng.random_range(low..high);
        let flag = Flag {
            check_name,
            check_type,
            violation_level: self
                .rng
                .random_range(1.0..if suspicious { 40.0 } else { 6.0 }),
            detail: format!("{unit}={value:.2}"),
            // Half the network runs Grim, the other half Vulcan.
            source_plugin: if server.is_multiple_of(2) {
                "grim"
            } else {
                "vulcan"
            },
            is_experimental: self.rng.random_bool(0.1),
            ping_ms: self.rng.random_range(15..220),
            tps: self.servers[server].tps,
        };
        let record = records::anticheat_flag(
            &self.world.servers[server],
            &self.world.players[player],
            &flag,
            at,
        );
        self.emit(RecordKind::AnticheatFlag, record);
    }

    /// Staff punish someone online now and then, and sometimes revoke an earlier punishment.
    pub(super) fn moderation_tick(&mut self, dt: f64, at: DateTime<Utc>) {
        let online = self.online_players() as f64;
        if online > 0.0 && self.chance(rate::PUNISH * online, dt) {
            self.punish(at);
        }
        self.revocable
            .retain(|p| p.expires_at.is_none_or(|until| until > at));
        let active = self.revocable.len() as f64;
        if active > 0.0 && self.chance(rate::REVOKE * active, dt) {
            let index = self.rng.random_range(0..self.revocable.len());
            let punishment = self.revocable.swap_remove(index);
            self.revoke(&punishment, at);
        }
    }

    fn punish(&mut self, at: DateTime<Utc>) {
        let Some(target) = self.pick_target() else {
            return;
        };
        let Some(server) = self.players[target].server else {
            return;
        };
        let suspicious = self.world.players[target].suspicious;
        let hours = Duration::hours;
        let (kind, reason, expires_at) = if suspicious && self.rng.random_bool(0.7) {
            let (check, ..) = pick(&mut self.rng, CHECKS);
            let days = pick(&mut self.rng, &[7, 30, 0]);
            (
                "ban",
                format!("Cheating ({check})"),
                (days > 0).then(|| at + Duration::days(days)),
            )
        } else {
            match self.rng.random_range(0..10) {
                0..=3 => ("warning", pick(&mut self.rng, WARNINGS).to_owned(), None),
                4..=6 => {
                    let (reason, h) = pick(&mut self.rng, MUTES);
                    ("mute", reason.to_owned(), Some(at + hours(h)))
                }
                7..=8 => ("kick", pick(&mut self.rng, KICKS).to_owned(), None),
                _ => {
                    let (reason, days) = pick(&mut self.rng, BANS);
                    let expires = (days > 0).then(|| at + Duration::days(days));
                    ("ban", reason.to_owned(), expires)
                }
            }
        };
        let staff = self.online_staff(server);
        self.next_external_id += 1;
        let punishment = PunishmentRecord {
            server,
            player: target,
            kind,
            reason,
            staff,
            expires_at,
            external_id: self.next_external_id.to_string(),
        };
        let record = records::punishment(&self.world, &punishment, at);
        self.emit(RecordKind::Punishment, record);
        match kind {
            "mute" => self.players[target].muted_until = expires_at,
            "kick" => self.leave(target, at),
            "ban" => {
                self.players[target].banned_until =
                    Some(expires_at.unwrap_or(DateTime::<Utc>::MAX_UTC));
                self.leave(target, at);
            }
            _ => {}
        }
        if matches!(kind, "mute" | "ban") {
            self.revocable.push(punishment);
        }
    }

    fn revoke(&mut self, punishment: &PunishmentRecord, at: DateTime<Utc>) {
        let why = pick(&mut self.rng, REVOKE_REASONS);
        let staff = self.online_staff(punishment.server);
        let record = records::revoke(&self.world, punishment, staff, why, at);
        self.emit(RecordKind::Punishment, record);
        let state = &mut self.players[punishment.player];
        match punishment.kind {
            "mute" => state.muted_until = None,
            _ => state.banned_until = None,
        }
    }

    /// An online player who is not staff; a cheater half of the time when one is online.
    fn pick_target(&mut self) -> Option<usize> {
        let candidates: Vec<usize> = (0..self.players.len())
            .filter(|&p| self.players[p].server.is_some() && self.world.players[p].staff.is_none())
            .collect();
        let cheaters: Vec<usize> = candidates
            .iter()
            .copied()
            .filter(|&p| self.world.players[p].suspicious)
            .collect();
        if !cheaters.is_empty() && self.rng.random_bool(0.5) {
            return Some(pick(&mut self.rng, &cheaters));
        }
        (!candidates.is_empty()).then(|| pick(&mut self.rng, &candidates))
    }

    /// A staff member online on `server` (else anywhere), or the console when none is.
    fn online_staff(&mut self, server: usize) -> Option<usize> {
        let staff: Vec<usize> = self
            .world
            .staff()
            .filter(|&s| self.players[s].server.is_some())
            .collect();
        let here: Vec<usize> = staff
            .iter()
            .copied()
            .filter(|&s| self.players[s].server == Some(server))
            .collect();
        let pool = if here.is_empty() { staff } else { here };
        (!pool.is_empty()).then(|| pick(&mut self.rng, &pool))
    }
}
