//! What happens during a session of the past: chat, custom events, flags, and now and then a
//! punishment at the end of a player's last session.

use super::{Planner, Session};
use crate::activity::content::{COMMANDS, LINES, pick};
use crate::activity::moderation::{CHECKS, KICKS, MUTES, WARNINGS};
use crate::activity::progress;
use crate::records::{EntryType, Flag, PunishmentRecord};
use chrono::{DateTime, Duration, Utc};
use rand::Rng;
use serde_json::Value;

impl Planner<'_> {
    /// Chat, custom events (the quest funnel in order) and flags during `session`.
    pub(super) fn fill(&mut self, session: &mut Session, votes: &mut u32) {
        let length = (session.quit - session.join).num_milliseconds();
        let minutes = (length / 60_000) as usize;
        let lines = self.rng.random_range(0..=minutes / 5);
        for at in self.times(session, lines) {
            let (entry, text) = if self.rng.random_bool(0.3) {
                (EntryType::Command, pick(&mut self.rng, COMMANDS))
            } else {
                (EntryType::Chat, pick(&mut self.rng, LINES))
            };
            session.chat.push((at, entry, text.to_owned()));
        }
        let rng = &mut self.rng;
        let server = &self.world.servers[session.server].name;
        let mut events: Vec<(&'static str, Value)> = Vec::new();
        if rng.random_bool(0.3) {
            *votes += 1;
            events.push(("vote_received", progress::vote_received(rng, *votes)));
        }
        if rng.random_bool(0.5) {
            let (quest, started) = progress::quest_started(rng, server);
            events.push(("quest_started", started));
            if rng.random_bool(0.6) {
                events.push(("quest_completed", progress::quest_completed(rng, quest)));
                if rng.random_bool(0.5) {
                    events.push(("shop_purchase", progress::shop_purchase(rng, true)));
                }
            }
        }
        if rng.random_bool(0.2) {
            events.push(("crate_opened", progress::crate_opened(rng, "vote")));
        }
        if rng.random_bool(0.1) {
            events.push(("shop_purchase", progress::shop_purchase(rng, false)));
        }
        let times = self.times(session, events.len());
        session.events = times
            .into_iter()
            .zip(events)
            .map(|(at, (name, properties))| (at, name, properties))
            .collect();
        let suspicious = self.world.players[session.player].suspicious;
        let flags = if suspicious {
            self.rng.random_range(1..=6)
        } else {
            usize::from(self.rng.random_bool(0.03))
        };
        for at in self.times(session, flags) {
            let (check_name, check_type, unit, low, high) = pick(&mut self.rng, CHECKS);
            let value = self.rng.random_range(low..high);
            let flag = Flag {
                check_name,
                check_type,
                violation_level: self
                    .rng
                    .random_range(1.0..if suspicious { 40.0 } else { 6.0 }),
                detail: format!("{unit}={value:.2}"),
                source_plugin: if session.server.is_multiple_of(2) {
                    "grim"
                } else {
                    "vulcan"
                },
                is_experimental: self.rng.random_bool(0.1),
                ping_ms: self.rng.random_range(15..220),
                tps: self.rng.random_range(19.6..=20.0),
            };
            session.flags.push((at, flag));
        }
    }

    /// `count` ascending times strictly inside `session`.
    fn times(&mut self, session: &Session, count: usize) -> Vec<DateTime<Utc>> {
        let length = (session.quit - session.join).num_milliseconds();
        let mut offsets: Vec<i64> = (0..count)
            .map(|_| self.rng.random_range(1..length))
            .collect();
        offsets.sort_unstable();
        offsets
            .into_iter()
            .map(|ms| session.join + Duration::milliseconds(ms))
            .collect()
    }

    /// Now and then staff warned, muted or kicked someone in their last session; a cheater
    /// who is not in the live network was banned for good and never came back.
    pub(super) fn maybe_punish(&mut self, session: usize, regular: bool) {
        let Session {
            player,
            server,
            quit,
            ..
        } = self.sessions[session];
        let suspicious = self.world.players[player].suspicious;
        let staff: Vec<usize> = self.world.staff().filter(|&s| s != player).collect();
        let by =
            (!staff.is_empty() && self.rng.random_bool(0.8)).then(|| pick(&mut self.rng, &staff));
        let at = quit - Duration::seconds(1);
        let (kind, reason, expires_at) = if suspicious && !regular {
            ("ban", "Cheating (hacked client)".to_owned(), None)
        } else if suspicious || self.rng.random_bool(0.06) {
            match self.rng.random_range(0..3) {
                0 => ("warning", pick(&mut self.rng, WARNINGS).to_owned(), None),
                1 => {
                    let (reason, hours) = pick(&mut self.rng, MUTES);
                    let until = (at + Duration::hours(hours)).min(self.end);
                    ("mute", reason.to_owned(), Some(until))
                }
                _ => ("kick", pick(&mut self.rng, KICKS).to_owned(), None),
            }
        } else {
            return;
        };
        self.next_external_id += 1;
        let record = PunishmentRecord {
            server,
            player,
            kind,
            reason,
            staff: by,
            expires_at,
            external_id: self.next_external_id.to_string(),
        };
        self.punishments.push((at, record));
    }
}
