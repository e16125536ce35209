//! The time left in a phase: the load's and the catch-up's from the log's bytes applied
//! ([`ByteRate`]), the index build's from its fraction done ([`fraction_eta`]).
//!
//! The target: the load's ETA within 20% on the benchmark, where one busy partition does
//! all the work. What the load's bytes look like, and why the rate is measured as it is:
//!
//! - **Bytes land in steps.** A partition's chunk is counted once every model has committed
//!   it: one busy partition lands a chunk about every second, and nothing in between. A rate
//!   taken at any instant (bytes so far over the time so far) falls between two chunks and
//!   jumps at each; so the rate is measured from chunk to chunk, when they land, and between
//!   two the ETA counts down to the end the last one predicted.
//! - **The phase's first seconds are not its pace.** The first chunk lands only after the
//!   consumer's first fetch and a whole chunk's work, and the live tables' autovacuum may
//!   compete with the first seconds. The rate over the whole phase carried that start to the
//!   end: 11% into a 39 s load it predicted 42.6 s left for 33.9 s (26% off), a start about
//!   1 s slower than the pace after it. So the rate counts from the first chunk landed, never
//!   from the phase's start. One chunk tells no rate, and nor do chunks of several partitions
//!   landing together (their work began before the first of them landed): no ETA until the
//!   chunks since the first have taken at least half as long as the first took to land.
//! - **The pace drifts** (the copy's tables grow, the live projector and readers come and
//!   go), so once the phase has run a while the rate is measured over its recent part only:
//!   the last third of the time since the first chunk, at least [`WINDOW_MIN`]. At least
//!   that long, to hold several chunks (each chunk's own pace varies by 10-15%); a third, so
//!   that after a change of pace the window holds only the new one once the phase has run
//!   half as long again.
//!
//! A change of pace cannot be foreseen: just after it, the ETA is off by about the change (a
//! load 1.3 x slower until 10% of its bytes predicts 30% too long at 10%, whatever measures
//! it). What this removes is the error that lasts: the start's, and the steps'.

use std::collections::VecDeque;
use std::time::Duration;

/// The rate is measured over at least this much of the phase (when it has run that long
/// since its first chunk)...
const WINDOW_MIN: Duration = Duration::from_secs(8);
/// ... and over at least this part of the time since the first chunk (1 / this).
const WINDOW_SHARE: u32 = 3;

/// A chunk counted: when (since any fixed instant) and the bytes applied by then.
#[derive(Debug, Clone, Copy)]
struct Landing {
    at: Duration,
    bytes: u64,
}

/// The bytes per second of a phase that replays the log, measured as its chunks land (see
/// the module's docs), and the time left it tells.
#[derive(Debug)]
pub(super) struct ByteRate {
    /// When the phase started.
    started: Duration,
    /// When the phase's first chunk landed.
    first: Option<Duration>,
    /// The landings the window may still start at, oldest first; the newest last.
    landings: VecDeque<Landing>,
    /// Bytes per second over the window as of the newest landing, once told (see the module's
    /// docs).
    per_second: Option<f64>,
}

impl ByteRate {
    /// The rate of a phase that started at `started` (since the instant of every `at`).
    pub(super) fn new(started: Duration) -> Self {
        ByteRate {
            started,
            first: None,
            landings: VecDeque::new(),
            per_second: None,
        }
    }

    /// A chunk landed at `at`, when `bytes` had been applied in all (a running total, not
    /// the chunk's own: only differences count). `at` never goes back.
    pub(super) fn landed(&mut self, at: Duration, bytes: u64) {
        match self.landings.back_mut() {
            // No bytes of its own (another partition's legacy messages): nothing landed.
            Some(last) if bytes <= last.bytes => return,
            // Two partitions' chunks counted at the same instant are one landing.
            Some(last) if at <= last.at => last.bytes = bytes,
            _ => self.landings.push_back(Landing { at, bytes }),
        }
        let first = *self.first.get_or_insert(at);
        if at.saturating_sub(first) < first.saturating_sub(self.started) / 2 {
            return;
        }
        let span = WINDOW_MIN.max(at.saturating_sub(first) / WINDOW_SHARE);
        let cutoff = at.saturating_sub(span);
        // The window starts at the latest landing at least `span` before this one, or at the
        // first. The cutoff only moves on (the span grows by a third of the time passed), so
        // a landing the window has moved past is never needed again.
        while self.landings.get(1).is_some_and(|next| next.at <= cutoff) {
            self.landings.pop_front();
        }
        self.per_second = match (self.landings.front(), self.landings.back()) {
            (Some(start), Some(newest)) if start.at < newest.at => {
                Some((newest.bytes - start.bytes) as f64 / (newest.at - start.at).as_secs_f64())
            }
            _ => None,
        };
    }

    /// The time left at `now` with `remaining` bytes to apply: the end the newest landing
    /// predicts at the window's rate, counted down since it landed (zero once past it).
    /// `None` before two chunks landed.
    pub(super) fn eta(&self, remaining: u64, now: Duration) -> Option<Duration> {
        let per_second = self.per_second?;
        let newest = self.landings.back()?;
        let left = Duration::try_from_secs_f64(remaining as f64 / per_second).ok()?;
        Some(left.saturating_sub(now.saturating_sub(newest.at)))
    }
}

/// A phase measured as a fraction done (the index build): the time left if the rest goes
/// at the pace so far. `None` before anything is done.
pub(super) fn fraction_eta(fraction: f64, elapsed: Duration) -> Option<Duration> {
    // NaN too: it is not above 0.
    if fraction.is_nan() || fraction <= 0.0 || elapsed.is_zero() {
        return None;
    }
    let fraction = fraction.min(1.0);
    Some(elapsed.mul_f64((1.0 - fraction) / fraction))
}

#[cfg(test)]
#[path = "eta_tests.rs"]
mod tests;
