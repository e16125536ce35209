//! The time left in a replaying phase from what each read model's transactions cost so far
//! ([`ModelWork`]), where the log's bytes landing ([`super::eta::ByteRate`]) cannot tell it.
//!
//! The replay is pipelined ([`super::pipeline`]): a fast model runs up to a few chunks
//! ahead of the slowest, and a chunk lands once the slowest has committed it. On a log of a
//! few chunks per partition (the benchmark's million records: about four), the fast models
//! are done with the whole log early, and the slowest then has the machine to itself and goes
//! about twice as fast: the bytes landed early foretold twice the time actually left (worst
//! errors of 120-800%).
//!
//! So the time left is told from the work left: each model's bytes still to apply, at the
//! time its own transactions took per byte so far, added up and divided by how many
//! transactions ran at once on average so far. When the fast models are done, the slowest's
//! transactions run alone and faster, by about the share the others had: the sum of the
//! work left, over the same concurrency, already counts that (as long as the models share
//! the machine about evenly, which is what PostgreSQL's backends on a few cores do). It is
//! measured at each model's commit, and counted down in between.
//!
//! What it gets wrong: the slowest model's own transactions run one after the other, so its
//! last chunks cannot use the concurrency the load had on average, and near the end the time
//! left comes out short (on the benchmark, 3.6 s left told as 1.5 s at 85% of the load, and
//! the countdown reaching zero before the last commit).

use std::time::Duration;

/// What one model did in the phase so far.
#[derive(Debug, Clone, Copy, Default)]
struct Done {
    bytes: u64,
    busy: Duration,
}

/// The work the replay's read models did in a phase so far, and the end it predicts.
#[derive(Debug, Default)]
pub(super) struct ModelWork {
    models: Vec<Done>,
    /// When the phase's first transaction started.
    first_start: Option<Duration>,
    /// The end the latest commit predicts, once every model has committed something.
    end: Option<Duration>,
}

impl ModelWork {
    /// Model `model` (of `models`) committed a transaction at `at` (since any fixed instant)
    /// that took `busy` and applied `bytes` of the log; the phase has `phase_bytes` to apply
    /// in all, each model.
    pub(super) fn committed(
        &mut self,
        (model, models): (usize, usize),
        at: Duration,
        bytes: u64,
        busy: Duration,
        phase_bytes: u64,
    ) {
        if self.models.len() < models {
            self.models.resize(models, Done::default());
        }
        if let Some(done) = self.models.get_mut(model) {
            done.bytes += bytes;
            done.busy += busy;
        }
        let started = at.saturating_sub(busy);
        let first_start = self.first_start.map_or(started, |first| first.min(started));
        self.first_start = Some(first_start);
        self.end = self
            .predict(at.saturating_sub(first_start), phase_bytes)
            .map(|left| at + left);
    }

    /// The time left after `wall` of work since the first transaction, or `None` while a
    /// model has applied nothing (its cost is unknown).
    fn predict(&self, wall: Duration, phase_bytes: u64) -> Option<Duration> {
        if phase_bytes == 0
            || wall.is_zero()
            || self.models.is_empty()
            || self.models.iter().any(|d| d.bytes == 0)
        {
            return None;
        }
        let busy: f64 = self.models.iter().map(|d| d.busy.as_secs_f64()).sum();
        let at_once = busy / wall.as_secs_f64();
        if at_once <= 0.0 {
            return None;
        }
        let left: f64 = self
            .models
            .iter()
            .map(|d| {
                let per_byte = d.busy.as_secs_f64() / d.bytes as f64;
                phase_bytes.saturating_sub(d.bytes) as f64 * per_byte
            })
            .sum();
        Duration::try_from_secs_f64(left / at_once).ok()
    }

    /// The time left at `now`: the end the latest commit predicted, counted down since (zero
    /// once past it). `None` until every model has committed something.
    pub(super) fn eta(&self, now: Duration) -> Option<Duration> {
        self.end.map(|end| end.saturating_sub(now))
    }
}

#[cfg(test)]
#[path = "model_work_tests.rs"]
mod tests;
