//! Summing walked players: players per step, the times between steps, and the opt-in extras
//! (a breakdown by the entry's property, the players who dropped off at a step).
//!
//! Each slice fills its own [`Tally`]; the slices' tallies are merged, then turned into
//! [`super::FunnelReport`].

use super::breakdown::Groups;
use super::drop_off::DropOffs;
use super::journey::Reached;
use super::time_to_convert::TimeToConvert;
use super::{Extras, FunnelReport, StepOutcome};
use uuid::Uuid;

/// One slice's (or, merged, the whole funnel's) counts.
#[derive(Debug, Clone)]
pub(crate) struct Tally {
    pub(crate) players: Vec<i64>,
    /// Per step (index 0 unused): microseconds from the previous step, one per player.
    pub(crate) from_previous: Vec<Vec<i64>>,
    /// Per step (index 0 unused): microseconds from the entry (step 1), one per player.
    pub(crate) from_start: Vec<Vec<i64>>,
    groups: Option<Groups>,
    dropped: Option<DropOffs>,
}

impl Tally {
    /// An empty tally for a funnel of `steps` steps, collecting what `extras` asks for.
    pub(crate) fn new(steps: usize, extras: &Extras) -> Tally {
        Tally {
            players: vec![0; steps],
            from_previous: vec![Vec::new(); steps],
            from_start: vec![Vec::new(); steps],
            groups: extras.breakdown.as_ref().map(|_| Groups::default()),
            dropped: extras.dropped_off.as_ref().map(DropOffs::new),
        }
    }

    /// Counts one player: `reached` by the best entry, whose breakdown property is
    /// `property` (None when missing, or when no breakdown was asked for).
    pub(crate) fn add(&mut self, player: Uuid, reached: &Reached, property: Option<&[u8]>) {
        let times = reached.as_slice();
        let Some(&entered) = times.first() else {
            return;
        };
        for (k, at) in times.iter().enumerate() {
            self.players[k] += 1;
            if k > 0 {
                self.from_previous[k].push(at - times[k - 1]);
                self.from_start[k].push(at - entered);
            }
        }
        if let Some(groups) = &mut self.groups {
            groups.add(property, times.len(), self.players.len());
        }
        if let Some(dropped) = &mut self.dropped {
            dropped.add(player, times);
        }
    }

    /// Adds another slice's tally to this one.
    pub(crate) fn merge(&mut self, other: Tally) {
        for (mine, theirs) in self.players.iter_mut().zip(other.players) {
            *mine += theirs;
        }
        for (mine, theirs) in self.from_previous.iter_mut().zip(other.from_previous) {
            mine.extend(theirs);
        }
        for (mine, theirs) in self.from_start.iter_mut().zip(other.from_start) {
            mine.extend(theirs);
        }
        if let (Some(mine), Some(theirs)) = (&mut self.groups, other.groups) {
            mine.merge(theirs);
        }
        if let (Some(mine), Some(theirs)) = (&mut self.dropped, other.dropped) {
            mine.merge(theirs);
        }
    }

    /// The funnel's outcome; `breakdown_limit` values get rows of their own.
    pub(crate) fn report(mut self, extras: &Extras) -> FunnelReport {
        let steps = self
            .players
            .iter()
            .zip(
                self.from_previous
                    .iter_mut()
                    .zip(self.from_start.iter_mut()),
            )
            .enumerate()
            .map(|(k, (&players, (from_previous, from_start)))| StepOutcome {
                players,
                median_seconds: if k == 0 {
                    None
                } else {
                    median_seconds(from_previous)
                },
                time_to_convert: (k > 0).then(|| TimeToConvert::of(from_start)),
            })
            .collect();
        let breakdown = self
            .groups
            .zip(extras.breakdown.as_ref())
            .map(|(groups, spec)| groups.rows(spec.limit));
        FunnelReport {
            steps,
            breakdown,
            dropped_off: self.dropped.map(DropOffs::page),
        }
    }
}

/// The median of microsecond durations, in seconds, interpolated between the two middle
/// values for an even count (PostgreSQL's `percentile_cont(0.5)`).
pub(crate) fn median_seconds(micros: &mut [i64]) -> Option<f64> {
    let n = micros.len();
    if n == 0 {
        return None;
    }
    let seconds = |m: i64| m as f64 / 1e6;
    let upper_index = n / 2;
    let (below, upper, _) = micros.select_nth_unstable(upper_index);
    let upper = seconds(*upper);
    if n % 2 == 1 {
        return Some(upper);
    }
    let lower = below.iter().copied().max().map_or(upper, seconds);
    Some(lower + (upper - lower) * 0.5)
}

#[cfg(test)]
mod tests {
    use super::super::journey::{JourneyEvent, Walk};
    use super::super::{BreakdownSpec, DropOffSpec, FunnelOrder};
    use super::*;

    #[test]
    fn the_median_interpolates_between_the_middle_values() {
        assert_eq!(median_seconds(&mut []), None);
        assert_eq!(median_seconds(&mut [5_000_000]), Some(5.0));
        assert_eq!(median_seconds(&mut [300_000_000, 60_000_000]), Some(180.0));
        assert_eq!(
            median_seconds(&mut [3, 1, 2].map(|s| s * 1_000_000)),
            Some(2.0)
        );
        let even = median_seconds(&mut [1_500_000, 1, 10, 7]).expect("a median");
        assert!((even - 0.0000085).abs() < 1e-15, "{even}");
    }

    #[test]
    fn a_tally_counts_players_per_step_and_merges() {
        let steps = ["a", "b", "c"].map(String::from);
        let walk = Walk::new(&steps, FunnelOrder::Sequential, 100, 0, 1000);
        let event = |code, at| JourneyEvent { code, at };
        let extras = Extras {
            breakdown: Some(BreakdownSpec {
                property: "region".into(),
                limit: 10,
            }),
            dropped_off: Some(DropOffSpec {
                step: 2,
                limit: 10,
                after: None,
            }),
        };
        let (p, q, r) = (Uuid::from_u128(1), Uuid::from_u128(2), Uuid::from_u128(3));
        let mut left = Tally::new(3, &extras);
        left.add(
            p,
            &walk.progress(&[event(1, 0), event(2, 10), event(3, 30)]),
            Some(b"eu"),
        );
        left.add(q, &walk.progress(&[event(2, 0)]), None);
        let mut right = Tally::new(3, &extras);
        right.add(r, &walk.progress(&[event(1, 5), event(2, 9)]), Some(b"eu"));
        left.merge(right);
        assert_eq!(left.players, [2, 2, 1]);
        assert_eq!(left.from_previous[1], [10, 4]);
        assert_eq!(left.from_start[2], [30]);
        let report = left.report(&extras);
        let outcomes = &report.steps;
        assert_eq!(outcomes[0].median_seconds, None);
        assert!(outcomes[0].time_to_convert.is_none());
        let near =
            |value: Option<f64>, expected: f64| value.is_some_and(|v| (v - expected).abs() < 1e-15);
        assert!(near(outcomes[1].median_seconds, 0.000007), "{outcomes:?}");
        assert!(near(outcomes[2].median_seconds, 0.00002), "{outcomes:?}");
        let rows = report.breakdown.expect("a breakdown");
        assert_eq!(rows.len(), 1, "{rows:?}");
        assert_eq!(rows[0].players, [2, 2, 1]);
        // q never entered: in no row and no list.
        let dropped = report.dropped_off.expect("a drop-off list");
        assert_eq!(dropped.players.len(), 1);
        assert_eq!(dropped.players[0].player, r);
    }
}
