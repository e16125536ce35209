//! What a rebuild tells while it runs: its phase, how much of the log it has applied, its rate
//! and the time left in the phase in progress. The same [`Progress`] feeds the progress bar,
//! the log lines (`rebuild phase` at every change of phase, `rebuild progress` every few
//! seconds without a bar) and [`RebuildOptions::progress`](super::RebuildOptions::progress)
//! (the benchmark and the tests watch it).

use std::time::Duration;

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
