//! What a rebuild tells while it runs: its phase, how much of the log it has applied, its rate
//! and the time left in the phase in progress. The same [`Progress`] feeds the progress bar,
//! the log lines (`rebuild phase` at every change of phase, `rebuild progress` every few
//! seconds without a bar) and [`RebuildOptions::progress`](super::RebuildOptions::progress)
//! (the benchmark and the tests watch it).

#[path = "eta.rs"]
mod eta;
#[path = "model_work.rs"]
mod model_work;

use eta::{ByteRate, fraction_eta};
use indicatif::{ProgressBar, ProgressStyle};
use model_work::ModelWork;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// How often the channel and the bar get the rebuild's progress.
const TICK: Duration = Duration::from_millis(200);
/// How often progress is logged when there is no bar.
const LOG_EVERY: Duration = Duration::from_secs(5);

/// The phases of a rebuild, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Phase {
    /// Creating the copy's schema and tables.
    #[default]
    Prepare,
    /// Replaying the log into the copy, up to the live checkpoints.
    Load,
    /// Building the copy's indexes and making its tables durable.
    IndexBuild,
    /// Replaying what the live projector applied during the load and the index build.
    CatchUp,
    /// The swap transaction.
    Swap,
    /// Swapped in.
    Done,
}

impl Phase {
    /// Its name in log lines (`phase` field) and on the progress bar.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Prepare => "prepare",
            Phase::Load => "load",
            Phase::IndexBuild => "index_build",
            Phase::CatchUp => "catch_up",
            Phase::Swap => "swap",
            Phase::Done => "done",
        }
    }
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a rebuild stands.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Progress {
    /// The phase in progress.
    pub phase: Phase,
    /// Records applied to the copy so far (every partition together).
    pub records: u64,
    /// Log messages applied to the copy so far.
    pub messages: u64,
    /// Bytes of log messages applied so far, and the stream's bytes: the load's measure of
    /// how much is done (records per message vary too much to count by messages).
    pub bytes: u64,
    /// The stream's bytes when last looked at.
    pub bytes_total: u64,
    /// Records applied per second over the phase so far.
    pub records_per_second: f64,
    /// The time left in the phase in progress, once it can be told.
    pub eta: Option<Duration>,
    /// Since the rebuild started.
    pub elapsed: Duration,
}

/// `count` per second over `elapsed` (0 before any time passed).
pub(super) fn per_second(count: u64, elapsed: Duration) -> f64 {
    if elapsed.is_zero() {
        0.0
    } else {
        count as f64 / elapsed.as_secs_f64()
    }
}

/// The cores the load's transactions are taken to share, for its ETA ([`ModelWork`]): this
/// machine's. PostgreSQL on a machine with more makes the ETA's floor (the slowest model's
/// own time left) lower than it could be, never higher.
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
}

/// How many transactions a read model ran on a rebuild's copy, over how many chunks: fewer
/// transactions than chunks when it was behind the others and took the chunks waiting for it
/// at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelTransactions {
    /// The read model.
    pub model: &'static str,
    /// Its transactions on the copy (load and catch-up).
    pub transactions: u64,
    /// The chunks they applied.
    pub chunks: u64,
}

/// What the tracker keeps of the phase in progress.
#[derive(Debug)]
struct Current {
    phase: Phase,
    started: Instant,
    /// Records applied when the phase started: its rate counts only its own.
    records_at_start: u64,
    /// The index build's fraction done, when it can be told.
    fraction: Option<f64>,
    /// Bytes applied when the phase started.
    bytes_at_start: u64,
    /// The load's and the catch-up's bytes per second, as their chunks land.
    rate: ByteRate,
    /// The pipelined load's work per read model: its ETA where there is one.
    work: ModelWork,
}

/// Follows a rebuild: counts what the replay applied, and tells it (the bar, the log lines,
/// the watch channel). Shared by the replay of every partition.
pub(super) struct Tracker {
    started: Instant,
    records: AtomicU64,
    messages: AtomicU64,
    bytes: AtomicU64,
    bytes_total: AtomicU64,
    current: Mutex<Current>,
    /// How long each phase ended so far took (a phase run again adds up).
    took: Mutex<Vec<(Phase, Duration)>>,
    /// Each model's transactions and the chunks they applied, in the order first seen.
    transactions: Mutex<Vec<ModelTransactions>>,
    bar: ProgressBar,
    channel: Option<watch::Sender<Progress>>,
}

impl Tracker {
    /// A tracker in the prepare phase, drawing a bar on stderr when `bar` (and stderr is a
    /// terminal), sending to `channel` if any.
    pub(super) fn new(bar: bool, channel: Option<watch::Sender<Progress>>) -> Self {
        let tracker = Tracker {
            started: Instant::now(),
            records: AtomicU64::new(0),
            messages: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            bytes_total: AtomicU64::new(0),
            current: Mutex::new(Current {
                phase: Phase::Prepare,
                started: Instant::now(),
                records_at_start: 0,
                fraction: None,
                bytes_at_start: 0,
                rate: ByteRate::new(Duration::ZERO),
                work: ModelWork::new(cores()),
            }),
            took: Mutex::new(Vec::new()),
            transactions: Mutex::new(Vec::new()),
            bar: make_progress_bar(bar),
            channel,
        };
        tracker.log_phase(Phase::Prepare);
        tracker.publish();
        tracker
    }

    /// Starts `phase`: logged and sent at once.
    pub(super) fn enter(&self, phase: Phase) {
        if let Ok(mut current) = self.current.lock() {
            if let Ok(mut took) = self.took.lock() {
                let ended = (current.phase, current.started.elapsed());
                match took.iter_mut().find(|(p, _)| *p == ended.0) {
                    Some((_, sum)) => *sum += ended.1,
                    None => took.push(ended),
                }
            }
            *current = Current {
                phase,
                started: Instant::now(),
                records_at_start: self.records.load(Ordering::Acquire),
                fraction: None,
                bytes_at_start: self.bytes.load(Ordering::Acquire),
                rate: ByteRate::new(self.started.elapsed()),
                work: ModelWork::new(cores()),
            };
        }
        self.log_phase(phase);
        self.publish();
        if phase == Phase::Done {
            self.bar.finish();
        }
    }

    /// How long each phase that ended took, in the order they first ran.
    pub(super) fn took(&self) -> Vec<(Phase, Duration)> {
        self.took.lock().map(|t| t.clone()).unwrap_or_default()
    }

    fn count_transaction(&self, model: &'static str, chunks: usize) {
        let mut all = self
            .transactions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let index = match all.iter().position(|t| t.model == model) {
            Some(index) => index,
            None => {
                all.push(ModelTransactions {
                    model,
                    transactions: 0,
                    chunks: 0,
                });
                all.len() - 1
            }
        };
        all[index].transactions += 1;
        all[index].chunks += chunks as u64;
    }

    /// Each model's transactions so far.
    pub(super) fn transactions(&self) -> Vec<ModelTransactions> {
        self.transactions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The records applied so far.
    pub(super) fn records(&self) -> u64 {
        self.records.load(Ordering::Acquire)
    }

    /// Counts a chunk applied to the copy.
    pub(super) fn applied(&self, messages: u64, records: u64, bytes: u64) {
        self.messages.fetch_add(messages, Ordering::AcqRel);
        self.records.fetch_add(records, Ordering::AcqRel);
        // Under the phase's lock, so the rate sees the landings in the order of their bytes
        // and times (a chunk a second; the lock is held for a few instructions).
        let mut current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        let total = self.bytes.fetch_add(bytes, Ordering::AcqRel) + bytes;
        current.rate.landed(self.started.elapsed(), total);
    }

    /// Counts one read model's transaction (`model`: its index and the number of models, and
    /// its name) over `chunks` chunks of `bytes` of the log in all, that took `busy`: for the
    /// ETA ([`ModelWork`]) and the report ([`ModelTransactions`]).
    pub(super) fn model_committed(
        &self,
        model: (usize, usize),
        name: &'static str,
        (chunks, bytes): (usize, u64),
        busy: Duration,
    ) {
        self.count_transaction(name, chunks);
        let mut current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        let phase_bytes = self
            .bytes_total
            .load(Ordering::Acquire)
            .saturating_sub(current.bytes_at_start);
        let now = self.started.elapsed();
        current.work.committed(model, now, bytes, busy, phase_bytes);
    }

    /// The stream's bytes, as last looked at.
    pub(super) fn stream_bytes(&self, total: u64) {
        self.bytes_total.store(total, Ordering::Release);
    }

    /// The fraction of the phase done, for phases that do not replay (the index build).
    pub(super) fn fraction(&self, fraction: f64) {
        if let Ok(mut current) = self.current.lock() {
            current.fraction = Some(fraction.clamp(0.0, 1.0));
        }
    }

    /// Where the rebuild stands now.
    pub(super) fn snapshot(&self) -> Progress {
        // The counts and the time read under the phase's lock, as `applied` writes them:
        // the bytes left and the newest landing the ETA counts from agree.
        let current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        let records = self.records.load(Ordering::Acquire);
        let bytes = self.bytes.load(Ordering::Acquire);
        let bytes_total = self.bytes_total.load(Ordering::Acquire).max(bytes);
        let now = self.started.elapsed();
        let in_phase = current.started.elapsed();
        let eta = match current.phase {
            // From the models' work once each has committed something (the pipelined load),
            // else from the bytes landed: none before two of the phase's chunks landed.
            Phase::Load | Phase::CatchUp => current
                .work
                .eta(now)
                .or_else(|| current.rate.eta(bytes_total - bytes, now)),
            Phase::IndexBuild => current.fraction.and_then(|f| fraction_eta(f, in_phase)),
            Phase::Done => Some(Duration::ZERO),
            Phase::Prepare | Phase::Swap => None,
        };
        Progress {
            phase: current.phase,
            records,
            messages: self.messages.load(Ordering::Acquire),
            bytes,
            bytes_total,
            records_per_second: per_second(
                records.saturating_sub(current.records_at_start),
                in_phase,
            ),
            eta,
            elapsed: now,
        }
    }

    /// Tells where the rebuild stands every [`TICK`] (the channel and the bar; a log line
    /// every [`LOG_EVERY`] without a bar) until `stop`.
    pub(super) async fn run(&self, stop: &CancellationToken) {
        let mut tick = tokio::time::interval(TICK);
        let mut logged_at = Instant::now();
        loop {
            // The select only picks what happens next.
            tokio::select! {
                biased;
                () = stop.cancelled() => return,
                _ = tick.tick() => {}
            }
            let progress = self.publish();
            if self.bar.is_hidden() && logged_at.elapsed() >= LOG_EVERY {
                logged_at = Instant::now();
                log_progress(&progress);
            }
        }
    }

    /// Sends the snapshot on the channel and draws it on the bar; returns it.
    fn publish(&self) -> Progress {
        let progress = self.snapshot();
        if let Some(channel) = &self.channel {
            channel.send_replace(progress.clone());
        }
        if !self.bar.is_hidden() {
            draw(
                &self.bar,
                &progress,
                self.current.lock().ok().and_then(|c| c.fraction),
            );
        }
        progress
    }

    fn log_phase(&self, phase: Phase) {
        let elapsed = self.started.elapsed();
        let records = self.records.load(Ordering::Acquire);
        tracing::info!(
            phase = phase.as_str(),
            elapsed_s = (elapsed.as_secs_f64() * 1000.0).round() / 1000.0,
            records,
            "rebuild phase"
        );
    }
}

/// The `rebuild progress` log line (without a bar).
fn log_progress(progress: &Progress) {
    tracing::info!(
        phase = progress.phase.as_str(),
        records = progress.records,
        records_per_second = progress.records_per_second.round() as u64,
        eta_s = progress.eta.map(|eta| eta.as_secs()),
        messages = progress.messages,
        bytes = progress.bytes,
        bytes_total = progress.bytes_total,
        elapsed_s = progress.elapsed.as_secs(),
        "rebuild progress"
    );
}

/// The bar's position is the phase's fraction done, in thousandths.
const BAR_LENGTH: u64 = 1000;

/// Draws `progress` on the bar: the phase, its fraction done, records, records/s and ETA.
fn draw(bar: &ProgressBar, progress: &Progress, fraction: Option<f64>) {
    let done = match progress.phase {
        Phase::Load | Phase::CatchUp if progress.bytes_total > 0 => {
            progress.bytes as f64 / progress.bytes_total as f64
        }
        Phase::IndexBuild => fraction.unwrap_or(0.0),
        Phase::Done => 1.0,
        _ => 0.0,
    };
    bar.set_prefix(progress.phase.as_str());
    bar.set_position((done.clamp(0.0, 1.0) * BAR_LENGTH as f64) as u64);
    let eta = progress.eta.map_or_else(
        || "-".to_owned(),
        |eta| indicatif::HumanDuration(eta).to_string(),
    );
    bar.set_message(format!(
        "{} records, {}/s, eta {eta}",
        indicatif::HumanCount(progress.records),
        indicatif::HumanCount(progress.records_per_second.round() as u64),
    ));
}

/// A progress bar (phase, fraction of the phase, records, rate, ETA), or a hidden one.
fn make_progress_bar(shown: bool) -> ProgressBar {
    if !shown {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(BAR_LENGTH);
    if let Ok(style) =
        ProgressStyle::with_template("{spinner} {elapsed_precise} {prefix:>11} [{bar:30}] {msg}")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

#[cfg(test)]
mod tests {
    use super::per_second;
    use std::time::Duration;

    #[test]
    fn rates_are_per_second_of_the_phase() {
        assert!((per_second(300, Duration::from_millis(1500)) - 200.0).abs() < 1e-9);
        assert_eq!(per_second(300, Duration::ZERO), 0.0);
    }
}
