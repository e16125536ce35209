//! One player's walk through a funnel: given the player's events in timeline order, the time
//! each step was reached by the player's best entry.
//!
//! Semantics, per entry (every occurrence of step 1 with `entry_from <= time < entry_to` is an
//! entry, so a player who drops out can re-enter later):
//! - `sequential`: the next occurrence of each step after the previous step; other events may
//!   come between.
//! - `strict`: each step must be the very next event (the events then also hold the player's
//!   other custom events, as code 0, which break the chain).
//! - `any`: steps 2..N in any order after the entry; step k counts once steps 2..k have all
//!   happened, at the latest of their first occurrences.
//!
//! Everything must happen within the window of the entry (the bound is inclusive). Ties in
//! time keep timeline order. The best entry is the one reaching the most steps; the earliest
//! among equals.
//!
//! The walk is linear in the player's events: every later entry's chain of step positions is
//! at or after the earlier entry's (the next occurrence of a code after a later position is
//! itself later), so one cursor per step only ever moves forward. `reference::progress` is the
//! direct quadratic reading of the rules above; a property test holds the two equal.

use super::FunnelOrder;

/// The most steps a funnel may have.
pub const MAX_STEPS: usize = 10;

/// One event of a player: which step name it carries and when it happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JourneyEvent {
    /// 1-based position of the event's name among the steps (its first position when a name
    /// repeats); 0 for an event that is no step.
    pub code: u8,
    /// When it happened, in microseconds (any fixed epoch).
    pub at: i64,
}

/// A funnel's rules, ready to walk players.
#[derive(Debug, Clone)]
pub struct Walk {
    /// The step names, in order.
    steps: Vec<String>,
    /// `canon[k]`: the code an event must carry to be step k + 1 (steps may repeat a name).
    canon: Vec<u8>,
    /// In `any` order: the earlier step slot with the same code that slot k must follow, if
    /// any (its occurrence is the next one after that slot's).
    same_code_before: Vec<Option<usize>>,
    order: FunnelOrder,
    window: i64,
    entry_from: i64,
    entry_to: i64,
}

impl Walk {
    /// `steps`: the step names in order (2..=10); `window`, `entry_from` and `entry_to` in
    /// the same microseconds as the events.
    pub fn new(
        steps: &[String],
        order: FunnelOrder,
        window: i64,
        entry_from: i64,
        entry_to: i64,
    ) -> Walk {
        let canon: Vec<u8> = steps
            .iter()
            .map(|step| {
                let first = steps.iter().position(|s| s == step).unwrap_or(0);
                u8::try_from(first + 1).unwrap_or(u8::MAX)
            })
            .collect();
        let same_code_before = (0..canon.len())
            .map(|k| (1..k).rev().find(|&j| canon[j] == canon[k]))
            .collect();
        Walk {
            steps: steps.to_vec(),
            canon,
            same_code_before,
            order,
            window,
            entry_from,
            entry_to,
        }
    }

    /// The code of an event named `name`: its step's 1-based position, 0 for no step.
    pub fn code_of(&self, name: &[u8]) -> u8 {
        self.steps
            .iter()
            .position(|s| s.as_bytes() == name)
            .map_or(0, |k| self.canon[k])
    }

    /// How many steps the funnel has.
    pub fn steps(&self) -> usize {
        self.canon.len()
    }

    /// The times at which the player's best entry reached each step (empty when the player
    /// never entered). `events` must be in timeline order.
    pub fn progress(&self, events: &[JourneyEvent]) -> Reached {
        match self.order {
            FunnelOrder::Sequential => self.sequential(events),
            FunnelOrder::Strict => self.strict(events),
            FunnelOrder::Any => self.any(events),
        }
    }

    fn is_entry(&self, event: &JourneyEvent) -> bool {
        event.code == self.canon[0] && event.at >= self.entry_from && event.at < self.entry_to
    }

    /// Every entry: its position, its time and the end of its window.
    fn entries<'e>(
        &self,
        events: &'e [JourneyEvent],
    ) -> impl Iterator<Item = (usize, i64, i64)> + use<'_, 'e> {
        events
            .iter()
            .enumerate()
            .filter(|(_, event)| self.is_entry(event))
            .map(|(i, entry)| (i, entry.at, entry.at.saturating_add(self.window)))
    }

    fn sequential(&self, events: &[JourneyEvent]) -> Reached {
        let m = self.canon.len();
        let mut best = Reached::default();
        // cursor[k]: the first occurrence of step k's code after some position at or before
        // the current chain's step k - 1 (or events.len() when there is none).
        let mut cursor = [0usize; MAX_STEPS];
        for (i, at, deadline) in self.entries(events) {
            let mut reached = Reached::starting(i, at);
            let mut previous = i;
            let mut exhausted = false;
            for (slot, &code) in cursor.iter_mut().zip(&self.canon).skip(1) {
                if *slot <= previous {
                    *slot = next_with_code(events, previous + 1, code);
                }
                let Some(step) = events.get(*slot) else {
                    exhausted = true;
                    break;
                };
                if step.at > deadline {
                    break;
                }
                reached.push(step.at);
                previous = *slot;
            }
            best.keep_better(reached);
            // A later entry's chain is at or after this one: it runs out of occurrences at
            // this step or earlier, so it cannot reach more steps than this entry did.
            if best.len() == m || exhausted {
                break;
            }
        }
        best
    }

    fn strict(&self, events: &[JourneyEvent]) -> Reached {
        let m = self.canon.len();
        let mut best = Reached::default();
        for (i, at, deadline) in self.entries(events) {
            let mut reached = Reached::starting(i, at);
            for (k, next) in (1..m).zip(events[i + 1..].iter()) {
                if next.code != self.canon[k] || next.at > deadline {
                    break;
                }
                reached.push(next.at);
            }
            best.keep_better(reached);
            if best.len() == m {
                break;
            }
        }
        best
    }

    fn any(&self, events: &[JourneyEvent]) -> Reached {
        let m = self.canon.len();
        let mut best = Reached::default();
        // cursor[k]: as in `sequential`, for slot k's occurrence (the next one after the entry,
        // or after the earlier slot with the same code).
        let mut cursor = [0usize; MAX_STEPS];
        for (i, at, deadline) in self.entries(events) {
            // The first step slot with no occurrence left at all, if any: no entry from here
            // on can get past it.
            let mut cap = m;
            for k in 1..m {
                let after = self.same_code_before[k].map_or(i, |j| cursor[j]);
                if after >= events.len() {
                    cursor[k] = events.len();
                } else if cursor[k] <= after {
                    cursor[k] = next_with_code(events, after + 1, self.canon[k]);
                }
                if cursor[k] >= events.len() {
                    cap = cap.min(k);
                }
            }
            let mut reached = Reached::starting(i, at);
            for &position in &cursor[1..m] {
                match events.get(position) {
                    Some(step) if step.at <= deadline => {
                        reached.push(reached.last().max(step.at));
                    }
                    _ => break,
                }
            }
            best.keep_better(reached);
            if best.len() == m || best.len() >= cap {
                break;
            }
        }
        best
    }
}

/// The index of the first event at or after `from` carrying `code` (`events.len()` if none).
fn next_with_code(events: &[JourneyEvent], from: usize, code: u8) -> usize {
    events
        .get(from..)
        .and_then(|rest| rest.iter().position(|e| e.code == code))
        .map_or(events.len(), |offset| from + offset)
}

/// The times each step was reached, in step order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reached {
    times: [i64; MAX_STEPS],
    len: usize,
    /// The position of the entry (the step-1 event) in the walked events.
    entry: usize,
}

impl Reached {
    fn starting(entry: usize, at: i64) -> Reached {
        let mut reached = Reached {
            entry,
            ..Reached::default()
        };
        reached.push(at);
        reached
    }

    fn push(&mut self, at: i64) {
        if let Some(slot) = self.times.get_mut(self.len) {
            *slot = at;
            self.len += 1;
        }
    }

    fn last(&self) -> i64 {
        self.as_slice().last().copied().unwrap_or(i64::MIN)
    }

    /// Replaces `self` with `other` when `other` reached strictly more steps.
    fn keep_better(&mut self, other: Reached) {
        if other.len > self.len {
            *self = other;
        }
    }

    /// How many steps were reached.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the player never entered.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The position, in the walked events, of the entry these times start from (0 when the
    /// player never entered): a breakdown reads the entry event's property through it.
    pub fn entry(&self) -> usize {
        self.entry
    }

    /// The times, step 1 first.
    pub fn as_slice(&self) -> &[i64] {
        &self.times[..self.len]
    }
}

#[cfg(test)]
mod reference;
#[cfg(test)]
mod tests;
