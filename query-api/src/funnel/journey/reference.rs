//! The funnel rules read directly (quadratic): what `Walk` must agree with.

use super::{JourneyEvent, MAX_STEPS, Walk};
use crate::funnel::FunnelOrder;

/// The best entry's step times, by trying every entry and scanning forward from it.
pub(super) fn progress(walk: &Walk, events: &[JourneyEvent]) -> Vec<i64> {
    progress_from(walk, events).1
}

/// The best entry's position (0 when none) and its step times.
pub(super) fn progress_from(walk: &Walk, events: &[JourneyEvent]) -> (usize, Vec<i64>) {
    let m = walk.canon.len();
    let mut best: Vec<i64> = Vec::new();
    let mut best_entry = 0;
    for (i, entry) in events.iter().enumerate() {
        if !walk.is_entry(entry) {
            continue;
        }
        let deadline = entry.at + walk.window;
        let mut reached = vec![entry.at];
        if walk.order == FunnelOrder::Any {
            let mut first_seen: [Option<i64>; MAX_STEPS] = [None; MAX_STEPS];
            for event in events[i + 1..].iter().take_while(|e| e.at <= deadline) {
                if let Some(slot) =
                    (1..m).find(|&s| first_seen[s].is_none() && event.code == walk.canon[s])
                {
                    first_seen[slot] = Some(event.at);
                }
            }
            for seen in first_seen.iter().take(m).skip(1) {
                let Some(at) = seen else { break };
                let previous = reached.last().copied().unwrap_or(i64::MIN);
                reached.push(previous.max(*at));
            }
        } else {
            let mut k = 1;
            for event in &events[i + 1..] {
                if k >= m || event.at > deadline {
                    break;
                }
                if event.code == walk.canon[k] {
                    reached.push(event.at);
                    k += 1;
                } else if walk.order == FunnelOrder::Strict {
                    break;
                }
            }
        }
        if reached.len() > best.len() {
            best = reached;
            best_entry = i;
        }
    }
    (best_entry, best)
}
