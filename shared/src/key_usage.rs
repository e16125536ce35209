//! When each API key was last used, recorded without a database write per request.
//!
//! A service that authenticates plugin or dashboard keys notes the time of every accepted
//! request in memory ([`KeyUsage::record`]: one map insert under a lock held for nanoseconds).
//! [`report_key_usage`] publishes what was noted every flush interval, and once more at
//! shutdown, as one core-NATS message on `<prefix>.keys.used`: a JSON object mapping key ids
//! to timestamps ([`UsageReport`]). query-api consumes the reports in a queue group and
//! writes them to `api_keys.last_used_at` in one statement per report.
//!
//! Core NATS is at-most-once: a report sent while no query-api listens is lost, so
//! `last_used_at` is "last seen", precise to the flush interval, not an audit trail.

use chrono::{DateTime, Utc};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

/// The body of a usage report: key id → when it was last used.
pub type UsageReport = HashMap<Uuid, DateTime<Utc>>;

/// The keys used since the last report, with the latest time each was used.
#[derive(Debug, Default)]
pub struct KeyUsage {
    seen: Mutex<UsageReport>,
}

impl KeyUsage {
    /// Nothing recorded yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Notes that `key_id` was used at `at`.
    pub fn record(&self, key_id: Uuid, at: DateTime<Utc>) {
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        let last = seen.entry(key_id).or_insert(at);
        if *last < at {
            *last = at;
        }
    }

    /// Takes everything noted so far, leaving the map empty.
    pub fn take(&self) -> UsageReport {
        std::mem::take(&mut *self.seen.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Puts back a report that could not be sent, keeping any later use.
    fn restore(&self, report: UsageReport) {
        for (key_id, at) in report {
            self.record(key_id, at);
        }
    }
}

/// Publishes what `usage` noted to `subject` every `every` until `shutdown`, then once more.
pub async fn report_key_usage(
    usage: std::sync::Arc<KeyUsage>,
    client: async_nats::Client,
    subject: String,
    every: Duration,
    shutdown: CancellationToken,
) {
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticks.tick().await;
    loop {
        let stopping = tokio::select! {
            () = shutdown.cancelled() => true,
            _ = ticks.tick() => false,
        };
        publish(&usage, &client, &subject).await;
        if stopping {
            // Core NATS buffers publishes; push the last report out before the process ends.
            let _ = tokio::time::timeout(Duration::from_secs(2), client.flush()).await;
            return;
        }
    }
}

async fn publish(usage: &KeyUsage, client: &async_nats::Client, subject: &str) {
    let report = usage.take();
    if report.is_empty() {
        return;
    }
    let body = match serde_json::to_vec(&report) {
        Ok(body) => body,
        Err(error) => {
            tracing::error!(%error, "key usage report could not be encoded");
            return;
        }
    };
    if let Err(error) = client.publish(subject.to_owned(), body.into()).await {
        tracing::warn!(%error, keys = report.len(), "key usage report not sent; kept for the next one");
        usage.restore(report);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_latest_use_and_empties_on_take() {
        let usage = KeyUsage::new();
        let key = Uuid::now_v7();
        let early = Utc::now();
        let late = early + chrono::Duration::seconds(5);
        usage.record(key, late);
        usage.record(key, early);
        let report = usage.take();
        assert_eq!(report.get(&key), Some(&late));
        assert!(usage.take().is_empty());
        usage.restore(report);
        assert_eq!(usage.take().len(), 1);
    }
}
