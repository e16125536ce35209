//! Counters of what the fleet sent, for the periodic one-line summary.

use shared::records::RecordKind;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use warden_sdk::{SdkError, WriteReport};

const KINDS: usize = RecordKind::PLUGIN.len();

/// Records sent by kind, and what went wrong. Shared by every sending task.
#[derive(Debug, Default)]
pub struct Stats {
    accepted: [AtomicU64; KINDS],
    duplicates: AtomicU64,
    rejected: AtomicU64,
    failed_records: AtomicU64,
    failed_requests: AtomicU64,
    retries: AtomicU64,
    online: AtomicU64,
}

/// A copy of the counters at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// Records stored, by kind (in [`RecordKind::PLUGIN`] order).
    pub accepted: [u64; KINDS],
    /// Records the service already had.
    pub duplicates: u64,
    /// Records the service refused.
    pub rejected: u64,
    /// Records in requests that failed for good.
    pub failed_records: u64,
    /// Requests that failed for good.
    pub failed_requests: u64,
    /// Retried attempts.
    pub retries: u64,
    /// Players online at the last tick.
    pub online: u64,
}

fn slot(kind: RecordKind) -> usize {
    RecordKind::PLUGIN
        .iter()
        .position(|k| *k == kind)
        .unwrap_or(0)
}

impl Stats {
    /// Counts the result of one request carrying `records` records of `kind`.
    pub fn record(&self, kind: RecordKind, records: usize, result: &Result<WriteReport, SdkError>) {
        match result {
            Ok(outcome) => {
                self.accepted[slot(kind)].fetch_add(outcome.accepted, Ordering::Relaxed);
                self.duplicates
                    .fetch_add(outcome.duplicates, Ordering::Relaxed);
                self.rejected
                    .fetch_add(outcome.rejected.len() as u64, Ordering::Relaxed);
                self.retries
                    .fetch_add(u64::from(outcome.retries), Ordering::Relaxed);
            }
            Err(error) => {
                self.failed_requests.fetch_add(1, Ordering::Relaxed);
                self.failed_records
                    .fetch_add(records as u64, Ordering::Relaxed);
                if let SdkError::GaveUp { attempts, .. } = error {
                    let retries = u64::from(attempts.saturating_sub(1));
                    self.retries.fetch_add(retries, Ordering::Relaxed);
                }
            }
        }
    }

    /// Records how many players are online now.
    pub fn set_online(&self, players: usize) {
        self.online.store(players as u64, Ordering::Relaxed);
    }

    /// The counters now.
    pub fn snapshot(&self) -> Snapshot {
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        Snapshot {
            accepted: std::array::from_fn(|i| load(&self.accepted[i])),
            duplicates: load(&self.duplicates),
            rejected: load(&self.rejected),
            failed_records: load(&self.failed_records),
            failed_requests: load(&self.failed_requests),
            retries: load(&self.retries),
            online: load(&self.online),
        }
    }
}

impl Snapshot {
    /// Records stored, all kinds together.
    pub fn total(&self) -> u64 {
        self.accepted.iter().sum()
    }

    /// True when nothing was refused or lost.
    pub fn clean(&self) -> bool {
        self.rejected == 0 && self.failed_requests == 0
    }

    /// One line: `online=25 sent 812 (heartbeat=12 chat=640 …) duplicates=0 rejected=0 …`.
    pub fn summary(&self) -> String {
        let mut line = format!("online={} sent {} (", self.online, self.total());
        for (i, kind) in RecordKind::PLUGIN.iter().enumerate() {
            let sep = if i == 0 { "" } else { " " };
            let _ = write!(line, "{sep}{}={}", kind.as_str(), self.accepted[i]);
        }
        let _ = write!(
            line,
            ") duplicates={} rejected={} failed={} ({} records) retries={}",
            self.duplicates, self.rejected, self.failed_requests, self.failed_records, self.retries
        );
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_outcomes_and_failures() {
        let stats = Stats::default();
        let ok = WriteReport {
            accepted: 3,
            duplicates: 1,
            rejected: vec![],
            retries: 2,
        };
        stats.record(RecordKind::Chat, 4, &Ok(ok));
        let gave_up = SdkError::GaveUp {
            attempts: 6,
            last: "down".to_owned(),
        };
        stats.record(RecordKind::Session, 2, &Err(gave_up));
        let snap = stats.snapshot();
        assert_eq!(snap.total(), 3);
        assert_eq!(snap.accepted[slot(RecordKind::Chat)], 3);
        assert_eq!(
            (snap.failed_requests, snap.failed_records, snap.retries),
            (1, 2, 7)
        );
        assert!(!snap.clean());
        let line = snap.summary();
        assert!(
            line.starts_with("online=0 sent 3 (heartbeat=0 chat=3 "),
            "{line}"
        );
        assert!(line.contains("failed=1 (2 records)"), "{line}");
    }
}
