//! The servers' past: a heartbeat every minute over the last 24 hours before the backfill and
//! every five minutes before that, back to the history's start, so the Overview's players chart
//! and each server's 1 h to 30 d charts open filled rather than on the minutes since the live
//! fleet started.
//!
//! Player counts follow the evening curve the sessions are drawn from ([`HOUR_WEIGHTS`]), each
//! server its share by popularity, at the size of the live network's crowd, and move to the
//! live fleet's crowd over the last hour ([`RAMP`]); TPS is a healthy
//! 20 with an occasional dip. The counts are a server's own report, as a plugin's are: they
//! are not derived from the history's sessions (those end at midnight, the heartbeats run up
//! to the backfill).

use super::{HOUR_WEIGHTS, Plan};
use crate::records::{self, Status};
use crate::world::World;
use chrono::{DateTime, Duration, DurationRound, Timelike, Utc};
use rand::Rng;
use rand::rngs::StdRng;
use serde_json::Value;

/// Heartbeats come every minute over this span before the backfill's `now`.
const DENSE: Duration = Duration::hours(24);
/// Before that, every five minutes.
const SPARSE_STEP: Duration = Duration::minutes(5);
/// The share of the live network online at the busiest hour.
const PEAK_SHARE: f64 = 0.6;
/// The share online once the live fleet runs (it starts with about 60% of its players on,
/// whatever the hour, and a few more join).
const LIVE_SHARE: f64 = 0.65;
/// Over this last stretch before the backfill the crowd moves to the live fleet's, so the
/// charts run into the live network without a cliff.
const RAMP: Duration = Duration::hours(1);

/// Every server's heartbeats over `[plan.start, plan.now)` (whole minutes), in time order.
pub(super) fn heartbeats(
    world: &World,
    plan: &Plan,
    rng: &mut StdRng,
) -> Vec<(DateTime<Utc>, Value)> {
    let live_players = plan.live_players;
    let popularity: f64 = world.servers.iter().map(|s| s.popularity).sum();
    let peak = HOUR_WEIGHTS.iter().copied().fold(0.0, f64::max);
    // Whole minutes: a second attempt the same day repeats the same times, which the service
    // samples once.
    let now = plan
        .now
        .duration_trunc(Duration::minutes(1))
        .unwrap_or(plan.now);
    let dense_from = now - DENSE;
    let mut out = Vec::new();
    let mut at = plan.start;
    while at < now {
        for server in &world.servers {
            let share = server.popularity / popularity.max(f64::MIN_POSITIVE);
            let ramp =
                ((at - (now - RAMP)).as_seconds_f64() / RAMP.as_seconds_f64()).clamp(0.0, 1.0);
            let online = PEAK_SHARE * weight(at) / peak * (1.0 - ramp) + LIVE_SHARE * ramp;
            let crowd = live_players as f64 * online * share;
            let noise: f64 = rng.random_range(-0.8..0.8);
            let status = Status {
                tps: if rng.random_bool(0.01) {
                    rng.random_range(14.0..18.5)
                } else {
                    rng.random_range(19.6..=20.0)
                },
                player_count: (crowd + noise)
                    .round()
                    .clamp(0.0, f64::from(server.max_players))
                    as usize,
                memory_used_mb: (f64::from(server.memory_max_mb) * rng.random_range(0.4..0.7))
                    as u32,
                online: true,
            };
            out.push((at, records::heartbeat(server, status, at)));
        }
        at += if at >= dense_from {
            Duration::minutes(1)
        } else {
            SPARSE_STEP.min((dense_from - at).max(Duration::minutes(1)))
        };
    }
    out
}

/// The hour curve at `at`, between its hour's weight and the next's.
fn weight(at: DateTime<Utc>) -> f64 {
    let hour = at.hour() as usize;
    let next = HOUR_WEIGHTS[(hour + 1) % 24];
    let through = f64::from(at.minute()) / 60.0;
    HOUR_WEIGHTS[hour] * (1.0 - through) + next * through
}
