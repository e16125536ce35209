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
//! The slowest model's own transactions run one after the other, so its last chunks cannot use
//! the concurrency the load had on average: told from the sum of the work left alone, the end
//! of the load came out short (on the benchmark, 3.6 s left told as 1.5 s at 85% of the load,
//! and the countdown reaching zero before the last commit). So the time left is at least the
//! slowest model's own: its work left at its pace so far, as many transactions at once as it
//! ran so far, sped up by the share of the cores the other models leave it once they are done
//! ([`ModelWork::new`]'s cores). A model's transaction in progress counts as done for the time
//! it has run since its last commit. Counting a short last chunk as a whole one (the players
//! fold's cost shrinks less than the chunk's bytes) was tried, and told the benchmark's last
//! chunk (19% of the log) as 6.2 s where it took 4.2.
//!
//! Since the index build starts beside the load ([`super::super::indexes`]), the slowest model
//! no longer gets all of the cores the others leave: the index build of their tables takes one.
//! On the benchmark the floor then told 12.4 s left where 20.6 s were, as the fast models
//! finished. Not sped up at all, it over-told the same moment by up to 2.5x in the simulations
//! below, where the cores are shared evenly. Neither holds 20% on a load of four chunks.

use std::time::Duration;

/// What one model did in the phase so far.
#[derive(Debug, Clone, Copy, Default)]
struct Done {
    bytes: u64,
    busy: Duration,
    /// When its latest transaction committed: its next one has run since, if it has one.
    last: Duration,
}

impl Done {
    /// Its time left at `now` to apply what it has not of `phase_bytes`, at the pace its
    /// transactions had so far beside the others', less the time its transaction in progress
    /// has run (if it has work left).
    fn left(&self, phase_bytes: u64, now: Duration) -> f64 {
        let left = phase_bytes.saturating_sub(self.bytes);
        if left == 0 {
            return 0.0;
        }
        let running = now.saturating_sub(self.last).as_secs_f64();
        (left as f64 * self.busy.as_secs_f64() / self.bytes as f64 - running).max(0.0)
    }
}

/// The work the replay's read models did in a phase so far, and the end it predicts.
#[derive(Debug)]
pub(super) struct ModelWork {
    /// The cores the models' transactions share (PostgreSQL's backends).
    cores: f64,
    models: Vec<Done>,
    /// When the phase's first transaction started.
    first_start: Option<Duration>,
    /// The end the latest commit predicts, once every model has committed something.
    end: Option<Duration>,
}

impl ModelWork {
    /// No work yet, of models whose transactions share `cores` cores (at least one).
    pub(super) fn new(cores: usize) -> Self {
        ModelWork {
            cores: cores.max(1) as f64,
            models: Vec::new(),
            first_start: None,
            end: None,
        }
    }

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
            done.last = at;
        }
        let started = at.saturating_sub(busy);
        let first_start = self.first_start.map_or(started, |first| first.min(started));
        self.first_start = Some(first_start);
        self.end = self
            .predict(at, at.saturating_sub(first_start), phase_bytes)
            .map(|left| at + left);
    }

    /// The time left at `now`, `wall` after the first transaction started, or `None` while a
    /// model has applied nothing (its cost is unknown): the models' work left over the
    /// transactions they ran at once on average, and at least the slowest model's own.
    fn predict(&self, now: Duration, wall: Duration, phase_bytes: u64) -> Option<Duration> {
        if phase_bytes == 0
            || wall.is_zero()
            || self.models.is_empty()
            || self.models.iter().any(|d| d.bytes == 0)
        {
            return None;
        }
        let wall = wall.as_secs_f64();
        let busy: f64 = self.models.iter().map(|d| d.busy.as_secs_f64()).sum();
        let at_once = busy / wall;
        if at_once <= 0.0 {
            return None;
        }
        // Alone, a model's transaction gets the cores the others had.
        let alone = (at_once / self.cores).max(1.0);
        let (shared, own) = self.models.iter().fold((0.0, 0.0f64), |(shared, own), d| {
            let work = d.left(phase_bytes, now);
            let own_at_once = (d.busy.as_secs_f64() / wall).max(1.0);
            (shared + work, own.max(work / own_at_once / alone))
        });
        Duration::try_from_secs_f64((shared / at_once).max(own)).ok()
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
