//! What a rebuild tells while it runs: its phase, how much of the log it has applied, its rate
//! and the time left in the phase in progress. The same [`Progress`] feeds the progress bar,
//! the log lines (`rebuild phase` at every change of phase, `rebuild progress` every few
//! seconds without a bar) and [`RebuildOptions::progress`](super::RebuildOptions::progress)
//! (the benchmark and the tests watch it).

use indicatif::{ProgressBar, ProgressStyle};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
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

/// Load and catch-up: the time left at the phase's rate so far, in the log's bytes (records
/// per message vary too much to count by messages). `None` until something was applied.
pub(super) fn bytes_eta(done: u64, remaining: u64, elapsed: Duration) -> Option<Duration> {
    if done == 0 || elapsed.is_zero() {
        return None;
    }
    let per_second = done as f64 / elapsed.as_secs_f64();
    Some(Duration::from_secs_f64(remaining as f64 / per_second))
}

/// [`bytes_eta`] as of the last chunk applied (`done` bytes over `measured_over`, the phase's
/// time until then), counted down by the time since (`since`): between two chunks the ETA
/// runs down instead of growing as the rate over a longer time falls, so the end it predicts
/// stays where the last chunk put it.
pub(super) fn countdown_eta(
    done: u64,
    remaining: u64,
    measured_over: Duration,
    since: Duration,
) -> Option<Duration> {
    bytes_eta(done, remaining, measured_over).map(|eta| eta.saturating_sub(since))
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

/// `count` per second over `elapsed` (0 before any time passed).
pub(super) fn per_second(count: u64, elapsed: Duration) -> f64 {
    if elapsed.is_zero() {
        0.0
    } else {
        count as f64 / elapsed.as_secs_f64()
    }
}

/// What the tracker keeps of the phase in progress.
#[derive(Debug)]
struct Current {
    phase: Phase,
    started: Instant,
    /// Records and bytes applied when the phase started: its rate counts only its own.
    records_at_start: u64,
    bytes_at_start: u64,
    /// The index build's fraction done, when it can be told.
    fraction: Option<f64>,
}

/// Follows a rebuild: counts what the replay applied, and tells it (the bar, the log lines,
/// the watch channel). Shared by the replay of every partition.
pub(super) struct Tracker {
    started: Instant,
    records: AtomicU64,
    messages: AtomicU64,
    bytes: AtomicU64,
    bytes_total: AtomicU64,
    /// When the last chunk was counted, in nanoseconds since `started`.
    applied_at: AtomicU64,
    current: Mutex<Current>,
    /// How long each phase ended so far took (a phase run again adds up).
    took: Mutex<Vec<(Phase, Duration)>>,
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
            applied_at: AtomicU64::new(0),
            current: Mutex::new(Current {
                phase: Phase::Prepare,
                started: Instant::now(),
                records_at_start: 0,
                bytes_at_start: 0,
                fraction: None,
            }),
            took: Mutex::new(Vec::new()),
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
                bytes_at_start: self.bytes.load(Ordering::Acquire),
                fraction: None,
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

    /// The records applied so far.
    pub(super) fn records(&self) -> u64 {
        self.records.load(Ordering::Acquire)
    }

    /// Counts a chunk applied to the copy.
    pub(super) fn applied(&self, messages: u64, records: u64, bytes: u64) {
        self.messages.fetch_add(messages, Ordering::AcqRel);
        self.records.fetch_add(records, Ordering::AcqRel);
        self.bytes.fetch_add(bytes, Ordering::AcqRel);
        let at = u64::try_from(self.started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.applied_at.fetch_max(at, Ordering::AcqRel);
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
        let records = self.records.load(Ordering::Acquire);
        let bytes = self.bytes.load(Ordering::Acquire);
        let bytes_total = self.bytes_total.load(Ordering::Acquire).max(bytes);
        let now = self.started.elapsed();
        let applied_at = Duration::from_nanos(self.applied_at.load(Ordering::Acquire));
        let (phase, in_phase, records_in_phase, bytes_in_phase, fraction, phase_at) =
            match self.current.lock() {
                Ok(c) => (
                    c.phase,
                    c.started.elapsed(),
                    records.saturating_sub(c.records_at_start),
                    bytes.saturating_sub(c.bytes_at_start),
                    c.fraction,
                    c.started.saturating_duration_since(self.started),
                ),
                Err(_) => (Phase::Prepare, Duration::ZERO, 0, 0, None, Duration::ZERO),
            };
        let eta = match phase {
            // Nothing applied in this phase yet: `bytes_in_phase` is 0 and there is no ETA.
            Phase::Load | Phase::CatchUp => countdown_eta(
                bytes_in_phase,
                bytes_total - bytes,
                applied_at.saturating_sub(phase_at),
                now.saturating_sub(applied_at),
            ),
            Phase::IndexBuild => fraction.and_then(|f| fraction_eta(f, in_phase)),
            Phase::Done => Some(Duration::ZERO),
            Phase::Prepare | Phase::Swap => None,
        };
        Progress {
            phase,
            records,
            messages: self.messages.load(Ordering::Acquire),
            bytes,
            bytes_total,
            records_per_second: per_second(records_in_phase, in_phase),
            eta,
            elapsed: self.started.elapsed(),
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
    use super::{bytes_eta, countdown_eta, fraction_eta, per_second};
    use std::time::Duration;

    #[test]
    fn the_load_eta_is_the_bytes_left_at_the_rate_so_far() {
        // 100 MB in 10 s: 10 MB/s; 300 MB left take 30 s.
        let eta = bytes_eta(100_000_000, 300_000_000, Duration::from_secs(10));
        assert_eq!(eta, Some(Duration::from_secs(30)));
        assert_eq!(
            bytes_eta(5, 0, Duration::from_secs(1)),
            Some(Duration::ZERO),
            "nothing left"
        );
        assert_eq!(
            bytes_eta(0, 10, Duration::from_secs(3)),
            None,
            "no rate yet"
        );
        assert_eq!(bytes_eta(10, 10, Duration::ZERO), None, "no time yet");
    }

    #[test]
    fn between_chunks_the_eta_counts_down_to_the_end_the_last_chunk_predicted() {
        // 100 MB in the 10 s up to the last chunk, 300 MB left: 30 s from that chunk.
        let at_chunk = countdown_eta(
            100_000_000,
            300_000_000,
            Duration::from_secs(10),
            Duration::ZERO,
        );
        assert_eq!(at_chunk, Some(Duration::from_secs(30)));
        let later = countdown_eta(
            100_000_000,
            300_000_000,
            Duration::from_secs(10),
            Duration::from_secs(4),
        );
        assert_eq!(
            later,
            Some(Duration::from_secs(26)),
            "4 s later, the same end"
        );
        let overdue = countdown_eta(100, 300, Duration::from_secs(1), Duration::from_secs(9));
        assert_eq!(
            overdue,
            Some(Duration::ZERO),
            "past the predicted end: due now"
        );
        assert_eq!(
            countdown_eta(0, 300, Duration::ZERO, Duration::from_secs(1)),
            None
        );
    }

    #[test]
    fn a_fraction_eta_extrapolates_the_pace_so_far() {
        let eta = fraction_eta(0.25, Duration::from_secs(10));
        assert_eq!(eta, Some(Duration::from_secs(30)));
        assert_eq!(
            fraction_eta(1.0, Duration::from_secs(10)),
            Some(Duration::ZERO)
        );
        assert_eq!(
            fraction_eta(2.0, Duration::from_secs(10)),
            Some(Duration::ZERO)
        );
        assert_eq!(fraction_eta(0.0, Duration::from_secs(10)), None);
        assert_eq!(fraction_eta(f64::NAN, Duration::from_secs(10)), None);
        assert_eq!(fraction_eta(0.5, Duration::ZERO), None);
    }

    #[test]
    fn rates_are_per_second_of_the_phase() {
        assert!((per_second(300, Duration::from_millis(1500)) - 200.0).abs() < 1e-9);
        assert_eq!(per_second(300, Duration::ZERO), 0.0);
    }
}
