//! The network's past (`--history-days`): what the demo players did on the days before the
//! fleet's first start, so retention (cohorts by first day), trends (events per day and hour)
//! and funnels have weeks of shape on a fresh stack instead of one afternoon.
//!
//! Both analytics read models use each record's own time, not the time it was received: the
//! active days (projector `active_days`) take a session's `at`, a chat line's `sent_at` and a
//! flag's `flagged_at`; the trend rollups (migration 0018) take the timeline's `occurred_at`.
//! So history sent today lands on the days it names.
//!
//! The plan is pure (this file, [`plan`]); [`batches`] turns it into records and [`backfill`]
//! sends them. The plan depends only on the world seed and the day it ends, so a second
//! attempt on the same day makes the same records with the same ids and the service stores
//! them once.

mod backfill;
mod batches;
mod happenings;
mod heartbeats;

pub use backfill::{Spec, backfill, run_once};
pub use batches::{History, batches};

use crate::records::{EntryType, Flag, PunishmentRecord};
use crate::world::World;
use chrono::{DateTime, Datelike, Duration, NaiveDate, Utc, Weekday};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::Value;

/// The longest history `--history-days` takes.
pub const MAX_DAYS: u32 = 90;
/// Live players with a past, at most: keeps the backfill small at load-test sizes.
const MAX_REGULARS: usize = 1_000;
/// New players per day, at most.
const MAX_NEW_PER_DAY: usize = 250;
/// Players join mostly in the (UTC) evening: relative weight of each hour of the day.
const HOUR_WEIGHTS: [f64; 24] = [
    4.0, 3.0, 2.0, 1.0, 1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 4.0, 5.0, 5.0, 6.0, 7.0, 8.0, 10.0,
    11.0, 11.0, 10.0, 8.0, 6.0,
];
/// The gap a player leaves between two sessions, at least.
const MIN_GAP_MINUTES: i64 = 10;

/// One session of the past: a join, what happened while online, and a quit.
#[derive(Debug, Clone)]
pub struct Session {
    /// Player index in the world.
    pub player: usize,
    /// Server index in the world.
    pub server: usize,
    /// When the player joined.
    pub join: DateTime<Utc>,
    /// When the player quit (after `join`).
    pub quit: DateTime<Utc>,
    /// Chat lines and commands, in time order.
    pub chat: Vec<(DateTime<Utc>, EntryType, String)>,
    /// Custom events (name and properties), in time order.
    pub events: Vec<(DateTime<Utc>, &'static str, Value)>,
    /// Anti-cheat flags, in time order.
    pub flags: Vec<(DateTime<Utc>, Flag)>,
}

/// The past of the network over `[start, end)`.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Midnight (UTC) of the first day.
    pub start: DateTime<Utc>,
    /// Midnight (UTC) of the day the history ends: the live fleet's day.
    pub end: DateTime<Utc>,
    /// When the history was planned: the servers' heartbeats run up to it.
    pub now: DateTime<Utc>,
    /// Players of the live network (the crowd the heartbeats count).
    pub live_players: usize,
    /// Each player's first day (day number from `start`), if they have a past.
    pub first_days: Vec<Option<u32>>,
    /// Every session, ordered by join time.
    pub sessions: Vec<Session>,
    /// Punishments issued by staff, in time order.
    pub punishments: Vec<(DateTime<Utc>, PunishmentRecord)>,
}

/// New players on each day of a `days`-day history ending before `end_day`: a quarter of the
/// live network a day, growing over the window, and more at weekends.
pub fn cohort_sizes(live_players: usize, days: u32, end_day: NaiveDate) -> Vec<usize> {
    let base = (live_players / 4).clamp(4, MAX_NEW_PER_DAY) as f64;
    (0..days)
        .map(|d| {
            let growth = 0.7 + 0.6 * f64::from(d) / f64::from(days.saturating_sub(1).max(1));
            let date = end_day - Duration::days(i64::from(days - d));
            (base * growth * weekend(date)).round().max(1.0) as usize
        })
        .collect()
}

/// Players the history's world needs: the live ones and every day's newcomers after them
/// (`World::generate` keeps the first players when it grows).
pub fn world_size(live_players: usize, days: u32, end_day: NaiveDate) -> usize {
    live_players
        + cohort_sizes(live_players, days, end_day)
            .iter()
            .sum::<usize>()
}

/// Saturday and Sunday are busier.
fn weekend(date: NaiveDate) -> f64 {
    match date.weekday() {
        Weekday::Sat | Weekday::Sun => 1.3,
        _ => 1.0,
    }
}

/// The history of `world` (of [`world_size`] players; the first `live_players` are the live
/// fleet's) over the `days` days before `now`'s UTC day.
pub fn plan(world: &World, live_players: usize, days: u32, now: DateTime<Utc>, seed: u64) -> Plan {
    let end_day = now.date_naive();
    let end = end_day.and_time(chrono::NaiveTime::MIN).and_utc();
    let start = end - Duration::days(i64::from(days));
    let mut rng = StdRng::seed_from_u64(seed ^ 0x4849_5354 ^ end.timestamp().unsigned_abs());
    let mut first_days = vec![None; world.players.len()];
    let regulars = live_players.min(world.players.len()).min(MAX_REGULARS);
    for (player, first) in first_days.iter_mut().enumerate().take(regulars) {
        // Staff have been around from the start; the regulars arrived over the first weeks.
        *first = Some(if world.players[player].staff.is_some() {
            0
        } else {
            rng.random_range(0..(days * 2 / 3).max(1))
        });
    }
    let mut next = live_players;
    for (day, size) in cohort_sizes(live_players, days, end_day).iter().enumerate() {
        for _ in 0..*size {
            if let Some(first) = first_days.get_mut(next) {
                *first = Some(day as u32);
            }
            next += 1;
        }
    }
    let mut planner = Planner {
        world,
        rng,
        start,
        end,
        sessions: Vec::new(),
        punishments: Vec::new(),
        next_external_id: start.timestamp_millis().unsigned_abs(),
    };
    for (player, first) in first_days.iter().enumerate() {
        if let Some(first) = *first {
            planner.player(player, player < regulars, first, days);
        }
    }
    let mut sessions = planner.sessions;
    sessions.sort_by_key(|s| (s.join, s.player));
    let mut punishments = planner.punishments;
    punishments.sort_by_key(|(at, _)| *at);
    Plan {
        start,
        end,
        now,
        live_players,
        first_days,
        sessions,
        punishments,
    }
}

struct Planner<'w> {
    world: &'w World,
    rng: StdRng,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
    sessions: Vec<Session>,
    punishments: Vec<(DateTime<Utc>, PunishmentRecord)>,
    next_external_id: u64,
}

impl Planner<'_> {
    /// A player's days: always their first day, then returns that thin out with time (a
    /// regular keeps coming back about every other day).
    fn player(&mut self, player: usize, regular: bool, first: u32, days: u32) {
        let staff = self.world.players[player].staff.is_some();
        let engagement: f64 = self.rng.random_range(0.6..1.4);
        let mut busy_until = self.start;
        let mut votes = 0;
        let mut last = None;
        for day in first..days {
            let date = (self.start + Duration::days(i64::from(day))).date_naive();
            let n = f64::from(day - first);
            let p = match () {
                _ if day == first => 1.0,
                _ if staff => 0.85,
                _ if regular => 0.5 * weekend(date),
                _ => (0.45 * n.powf(-0.6) * engagement * weekend(date)).min(0.95),
            };
            if !self.rng.random_bool(p) {
                continue;
            }
            let count = if self.rng.random_bool(if regular { 0.5 } else { 0.25 }) {
                2
            } else {
                1
            };
            for _ in 0..count {
                let midnight = self.start + Duration::days(i64::from(day));
                if let Some(session) = self.session(player, midnight, busy_until, &mut votes) {
                    busy_until = session.quit + Duration::minutes(MIN_GAP_MINUTES);
                    last = Some(self.sessions.len());
                    self.sessions.push(session);
                }
            }
        }
        if let Some(last) = last {
            self.maybe_punish(last, regular);
        }
    }

    /// A session on the day starting at `midnight`, not before `not_before`; none when it
    /// would not fit before the end of the history.
    fn session(
        &mut self,
        player: usize,
        midnight: DateTime<Utc>,
        not_before: DateTime<Utc>,
        votes: &mut u32,
    ) -> Option<Session> {
        let hour = weighted(&mut self.rng, &HOUR_WEIGHTS);
        let offset = hour as i64 * 3_600_000 + self.rng.random_range(0..3_600_000);
        // Late on the last day, early enough to still be a session.
        let join = (midnight + Duration::milliseconds(offset))
            .max(not_before)
            .min(self.end - Duration::minutes(10));
        if join < not_before {
            return None;
        }
        // Most sessions are short, a few last the evening: log-uniform 8..150 minutes.
        let minutes = (8f64.ln() + self.rng.random::<f64>() * (150f64 / 8.0).ln()).exp();
        let quit = (join + Duration::seconds((minutes * 60.0) as i64))
            .min(self.end - Duration::seconds(1));
        if quit - join < Duration::minutes(2) {
            return None;
        }
        let weights: Vec<f64> = self.world.servers.iter().map(|s| s.popularity).collect();
        let server = weighted(&mut self.rng, &weights);
        let mut session = Session {
            player,
            server,
            join,
            quit,
            chat: Vec::new(),
            events: Vec::new(),
            flags: Vec::new(),
        };
        self.fill(&mut session, votes);
        Some(session)
    }
}

/// An index drawn with the given relative weights.
fn weighted(rng: &mut impl Rng, weights: &[f64]) -> usize {
    let total: f64 = weights.iter().sum();
    if total <= 0.0 {
        return 0;
    }
    let mut left = rng.random_range(0.0..total);
    weights
        .iter()
        .position(|w| {
            left -= w;
            left < 0.0
        })
        .unwrap_or(weights.len() - 1)
}

#[cfg(test)]
mod tests;
