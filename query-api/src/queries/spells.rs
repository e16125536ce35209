//! Downtime periods and low-TPS spells, found in a server's history slots (minutes, or hours
//! for long ranges). Pure functions over what the rollups hold, tested beside them.

use chrono::{DateTime, Duration, DurationRound, Utc};
use serde::Serialize;
use utoipa::ToSchema;

/// A spell of low TPS starts where a slot's average TPS falls below this: 20 is a healthy
/// Minecraft server, and players notice lag from about 18.
pub const LOW_TPS_THRESHOLD: f64 = 18.0;

/// A low-TPS spell is marked only once it lasts this long (three minutes): one slow minute
/// is a hiccup (a world save, a chunk burst), three in a row are a problem worth a look.
pub const LOW_TPS_MIN_DURATION: Duration = Duration::minutes(3);

/// A time the server was down: no heartbeat for longer than the account's offline threshold
/// (3 x its sync interval), or after a shutdown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub struct Downtime {
    /// When it went quiet: the end of the last slot with a heartbeat, or its last heartbeat.
    pub from: DateTime<Utc>,
    /// When heartbeats came back; null while it is still down.
    pub to: Option<DateTime<Utc>>,
}

/// Consecutive slots whose average TPS was below [`LOW_TPS_THRESHOLD`] for at least
/// [`LOW_TPS_MIN_DURATION`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct LowTpsSpell {
    /// Start of its first slot.
    pub from: DateTime<Utc>,
    /// End of its last slot.
    pub to: DateTime<Utc>,
    /// The lowest slot average TPS within it.
    pub lowest_avg_tps: f64,
}

/// One slot of history: its start and its average TPS.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slot {
    /// Start of the slot (a minute or an hour).
    pub at: DateTime<Utc>,
    /// Average TPS over its samples.
    pub avg_tps: f64,
}

/// What the server's status row says about now.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Liveness {
    /// Its first heartbeat ever.
    pub first_seen: DateTime<Utc>,
    /// Its latest heartbeat.
    pub last_heartbeat_at: DateTime<Utc>,
    /// Online now (by the offline rule of `routes::liveness`).
    pub is_online: bool,
}

/// The downtime in `[from, to)` given the slots (each `width` long, sorted, all within the
/// window) that hold a heartbeat.
///
/// A run of empty slots between two full ones is downtime when it is at least `offline_after`
/// long (3 x the sync interval): with minute slots, one empty minute means no heartbeat for
/// at least a minute. Empty slots at the start count too once the server existed. A server
/// offline now is down from its last heartbeat, with no end. Resolution is one slot: the
/// 30-day view (hour slots) marks only whole hours without a heartbeat.
pub fn downtime(
    slots: &[Slot],
    width: Duration,
    offline_after: Duration,
    window: (DateTime<Utc>, DateTime<Utc>),
    live: Liveness,
) -> Vec<Downtime> {
    let (from, to) = window;
    let mut spells = Vec::new();
    // Where coverage has reached: the window start, or the server's first slot if later.
    let mut covered_to = from.max(live.first_seen);
    for slot in slots {
        let gap = slot.at - covered_to;
        if gap > Duration::zero() && gap >= offline_after {
            spells.push(Downtime {
                from: covered_to,
                to: Some(slot.at),
            });
        }
        covered_to = covered_to.max(slot.at + width);
    }
    // The rollups and the server's row are written in one transaction, so an online server
    // has a slot for its last heartbeat: empty slots before that one are downtime too.
    let last_slot = live
        .last_heartbeat_at
        .duration_trunc(width)
        .unwrap_or(live.last_heartbeat_at);
    let gap = last_slot.min(to) - covered_to;
    if live.is_online && gap > Duration::zero() && gap >= offline_after {
        spells.push(Downtime {
            from: covered_to,
            to: Some(last_slot.min(to)),
        });
    }
    if !live.is_online && live.last_heartbeat_at < to {
        let start = live.last_heartbeat_at.max(from);
        // The last slot ends after the last heartbeat: the open spell replaces any closed one
        // that started at or after it.
        spells.retain(|spell| spell.from < start);
        spells.push(Downtime {
            from: start,
            to: None,
        });
    }
    spells
}

/// The low-TPS spells among `slots` (each `width` long, sorted): runs of adjacent slots with
/// an average below [`LOW_TPS_THRESHOLD`] lasting at least [`LOW_TPS_MIN_DURATION`].
pub fn low_tps_spells(slots: &[Slot], width: Duration) -> Vec<LowTpsSpell> {
    let mut spells = Vec::new();
    let mut run: Option<LowTpsSpell> = None;
    for slot in slots {
        let low = slot.avg_tps < LOW_TPS_THRESHOLD;
        run = match run {
            Some(mut current) if low && current.to == slot.at => {
                current.to = slot.at + width;
                current.lowest_avg_tps = current.lowest_avg_tps.min(slot.avg_tps);
                Some(current)
            }
            other => {
                spells.extend(other);
                low.then_some(LowTpsSpell {
                    from: slot.at,
                    to: slot.at + width,
                    lowest_avg_tps: slot.avg_tps,
                })
            }
        };
    }
    spells.extend(run);
    spells.retain(|spell| spell.to - spell.from >= LOW_TPS_MIN_DURATION);
    spells
}

#[cfg(test)]
#[path = "spells_tests.rs"]
mod tests;
