//! Latency samples and what one measurement reports.

use serde::Serialize;
use std::time::Duration;

/// Latency samples of one measurement.
#[derive(Debug, Default, Clone)]
pub(crate) struct Latencies {
    samples: Vec<Duration>,
}

impl Latencies {
    /// Records one sample.
    pub(crate) fn push(&mut self, sample: Duration) {
        self.samples.push(sample);
    }

    /// Adds every sample of `other`.
    pub(crate) fn merge(&mut self, other: Latencies) {
        self.samples.extend(other.samples);
    }

    /// How many samples.
    pub(crate) fn len(&self) -> usize {
        self.samples.len()
    }

    /// The `q` quantile (0..=1) in milliseconds, nearest rank; `None` without samples.
    pub(crate) fn quantile_ms(&self, q: f64) -> Option<f64> {
        if self.samples.is_empty() {
            return None;
        }
        let mut sorted = self.samples.clone();
        sorted.sort_unstable();
        let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
        Some(sorted[rank - 1].as_secs_f64() * 1000.0)
    }
}

/// One measurement in the report.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Measurement {
    /// Stable key, e.g. `ingest_chat`.
    pub(crate) name: String,
    /// What was measured, in a sentence.
    pub(crate) what: String,
    /// Units counted by `rate` (records, requests, rows, ...).
    pub(crate) unit: String,
    /// Units completed.
    pub(crate) count: u64,
    /// Wall-clock seconds the units took.
    pub(crate) seconds: f64,
    /// `count / seconds`.
    pub(crate) rate_per_s: f64,
    /// Median latency of one operation, when operations were timed.
    pub(crate) p50_ms: Option<f64>,
    /// 99th percentile latency.
    pub(crate) p99_ms: Option<f64>,
    /// Operations that failed (non-2xx, timeouts); a failure never counts in `count`.
    pub(crate) errors: u64,
}

impl Measurement {
    /// A measurement of `count` units in `elapsed`, with optional per-operation latencies.
    pub(crate) fn new(
        name: &str,
        what: &str,
        unit: &str,
        count: u64,
        elapsed: Duration,
        latencies: Option<&Latencies>,
        errors: u64,
    ) -> Measurement {
        let seconds = elapsed.as_secs_f64().max(1e-9);
        Measurement {
            name: name.to_owned(),
            what: what.to_owned(),
            unit: unit.to_owned(),
            count,
            seconds,
            rate_per_s: count as f64 / seconds,
            p50_ms: latencies.and_then(|l| l.quantile_ms(0.50)),
            p99_ms: latencies.and_then(|l| l.quantile_ms(0.99)),
            errors,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_use_nearest_rank() {
        let mut latencies = Latencies::default();
        for ms in 1..=100 {
            latencies.push(Duration::from_millis(ms));
        }
        assert_eq!(latencies.quantile_ms(0.5), Some(50.0));
        assert_eq!(latencies.quantile_ms(0.99), Some(99.0));
        assert_eq!(Latencies::default().quantile_ms(0.5), None);
    }
}
