//! Time to convert: how long players took from their entry (step 1) to a later step, as a
//! median and as counts in fixed buckets.
//!
//! The buckets are fixed so that two funnels (or two runs) compare at a glance: under a
//! minute, 1-10 minutes, 10-60 minutes, 1-24 hours, 1-7 days and 7 days or more. Each bucket
//! holds durations at or above its lower bound and below its upper one: exactly 60 s is in
//! "1m-10m", not in "<1m".

use super::tally::median_seconds;

/// The buckets: a label and the upper bound in seconds (exclusive; None for the last one).
pub const BUCKETS: [(&str, Option<i64>); 6] = [
    ("<1m", Some(60)),
    ("1m-10m", Some(600)),
    ("10m-1h", Some(3_600)),
    ("1h-1d", Some(86_400)),
    ("1d-7d", Some(604_800)),
    (">=7d", None),
];

/// The time players took from step 1 to one later step.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeToConvert {
    /// Median seconds from step 1 (None when nobody reached the step).
    pub median_seconds: Option<f64>,
    /// Players per bucket of [`BUCKETS`], in that order.
    pub buckets: [i64; BUCKETS.len()],
}

impl TimeToConvert {
    /// Summarizes microsecond durations from step 1, one per player who reached the step.
    pub(crate) fn of(micros: &mut [i64]) -> TimeToConvert {
        let mut buckets = [0; BUCKETS.len()];
        for &duration in micros.iter() {
            buckets[bucket_of(duration)] += 1;
        }
        TimeToConvert {
            median_seconds: median_seconds(micros),
            buckets,
        }
    }
}

/// The bucket of a duration in microseconds.
fn bucket_of(micros: i64) -> usize {
    BUCKETS
        .iter()
        .position(|(_, upper)| upper.is_none_or(|seconds| micros < seconds * 1_000_000))
        .unwrap_or(BUCKETS.len() - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000;

    #[test]
    fn bucket_edges_belong_to_the_bucket_above() {
        let cases = [
            (0, 0),
            (60 * S - 1, 0),
            (60 * S, 1),
            (600 * S - 1, 1),
            (600 * S, 2),
            (3_600 * S, 3),
            (86_400 * S - 1, 3),
            (86_400 * S, 4),
            (604_800 * S - 1, 4),
            (604_800 * S, 5),
            (90 * 86_400 * S, 5),
        ];
        for (micros, bucket) in cases {
            assert_eq!(bucket_of(micros), bucket, "{micros} µs");
        }
    }

    #[test]
    fn the_summary_counts_every_player_once() {
        let mut durations = [30 * S, 60 * S, 90 * S, 7_200 * S];
        let summary = TimeToConvert::of(&mut durations);
        assert_eq!(summary.buckets, [1, 2, 0, 1, 0, 0]);
        // Even count: between 60 s and 90 s.
        assert_eq!(summary.median_seconds, Some(75.0));
        let empty = TimeToConvert::of(&mut []);
        assert_eq!((empty.median_seconds, empty.buckets), (None, [0; 6]));
    }
}
