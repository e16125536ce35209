//! The funnel response: per-step counts, conversions and times, and the optional breakdown
//! and drop-off list, shaped from [`crate::funnel::FunnelReport`].

use crate::funnel::time_to_convert::BUCKETS;
use crate::funnel::{
    BreakdownGroup, BreakdownRow, DropOffPage, FunnelReport, StepOutcome, TimeToConvert,
};
use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

/// One step's result.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct FunnelStep {
    /// The step's event name.
    pub name: String,
    /// Distinct players who reached this step.
    pub players: i64,
    /// players / players of step 1 (0 when nobody entered).
    pub conversion_from_start: f64,
    /// players / players of the previous step (1 for the first step).
    pub conversion_from_previous: f64,
    /// Median seconds from the previous step to this one; null for the first step or when
    /// nobody reached it.
    pub median_seconds_from_previous: Option<f64>,
    /// Median seconds from step 1 to this one (time to convert); null for the first step or
    /// when nobody reached it.
    pub median_seconds_from_start: Option<f64>,
    /// Time to convert as a distribution: the players who reached this step, by time from
    /// step 1, in six fixed buckets (`<1m`, `1m-10m`, `10m-1h`, `1h-1d`, `1d-7d`, `>=7d`;
    /// each holds times at or above `min_seconds` and below `max_seconds`). Empty for the
    /// first step.
    pub time_to_convert: Vec<TimeBucket>,
}

/// One bucket of a time-to-convert distribution.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct TimeBucket {
    /// `<1m`, `1m-10m`, `10m-1h`, `1h-1d`, `1d-7d` or `>=7d`.
    pub label: String,
    /// Lower bound in seconds (inclusive).
    pub min_seconds: i64,
    /// Upper bound in seconds (exclusive); null for the last bucket.
    pub max_seconds: Option<i64>,
    /// Players whose time from step 1 falls in the bucket.
    pub players: i64,
}

/// The funnel broken down by a property of each player's entry.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct FunnelBreakdown {
    /// The property key asked for.
    pub property: String,
    /// The top values by players entering (ties by value), then `other`, then `none`; a row
    /// is left out when it counts nobody. The rows' players add up to the funnel's.
    pub rows: Vec<FunnelBreakdownRow>,
}

/// One breakdown row.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct FunnelBreakdownRow {
    /// `value` (one property value), `other` (the values past the limit) or `none` (entries
    /// without the property, or with it null).
    pub group: BreakdownKind,
    /// The value as text (`properties ->> key`); null for `other` and `none`.
    pub value: Option<String>,
    /// Players per step, step 1 first.
    pub players: Vec<i64>,
}

/// What a breakdown row counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum BreakdownKind {
    /// One value.
    Value,
    /// The values past the limit.
    Other,
    /// No value.
    None,
}

/// One page of the players who dropped off at a step.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct FunnelDropOff {
    /// The step they reached last (1-based); they did not reach the next one.
    pub step: usize,
    /// How many players dropped off there in all (players of this step minus the next).
    pub total: i64,
    /// This page, by player id.
    pub players: Vec<DroppedOffPlayer>,
    /// Pass as `dropped_off.after` for the next page; null on the last page.
    pub next_after: Option<Uuid>,
}

/// A player who dropped off.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct DroppedOffPlayer {
    /// The player (their page is `/players/{player_uuid}`).
    pub player_uuid: Uuid,
    /// When their best entry (step 1) happened.
    pub entered_at: DateTime<Utc>,
    /// When they reached the step they dropped off at.
    pub last_step_at: DateTime<Utc>,
}

/// The computed funnel.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FunnelResult {
    /// One entry per requested step, in order.
    pub steps: Vec<FunnelStep>,
    /// The breakdown, when `breakdown` was asked for; else null.
    pub breakdown: Option<FunnelBreakdown>,
    /// The players who dropped off, when `dropped_off` was asked for; else null.
    pub dropped_off: Option<FunnelDropOff>,
}

/// Shapes a report of a funnel over `steps`; `property` is the breakdown's key, if any.
pub(super) fn shape(
    steps: &[String],
    report: FunnelReport,
    property: Option<String>,
) -> FunnelResult {
    let counts = summarize(steps, &report.steps);
    let breakdown = report
        .breakdown
        .zip(property)
        .map(|(rows, property)| FunnelBreakdown {
            property,
            rows: rows.into_iter().map(breakdown_row).collect(),
        });
    let dropped_off = report.dropped_off.map(|page| drop_off(page, &counts));
    FunnelResult {
        steps: counts,
        breakdown,
        dropped_off,
    }
}

fn drop_off(page: DropOffPage, counts: &[FunnelStep]) -> FunnelDropOff {
    let players = |k: usize| counts.get(k).map_or(0, |s| s.players);
    FunnelDropOff {
        step: page.step,
        // `step` is 1-based: players of step k minus players of step k + 1.
        total: players(page.step.saturating_sub(1)) - players(page.step),
        players: page
            .players
            .into_iter()
            .map(|p| DroppedOffPlayer {
                player_uuid: p.player,
                entered_at: p.entered_at,
                last_step_at: p.last_step_at,
            })
            .collect(),
        next_after: page.next_after,
    }
}

fn breakdown_row(row: BreakdownRow) -> FunnelBreakdownRow {
    let (group, value) = match row.group {
        BreakdownGroup::Value(value) => (BreakdownKind::Value, Some(value)),
        BreakdownGroup::Other => (BreakdownKind::Other, None),
        BreakdownGroup::Missing => (BreakdownKind::None, None),
    };
    FunnelBreakdownRow {
        group,
        value,
        players: row.players,
    }
}

/// The buckets of a time-to-convert summary (none for step 1).
fn buckets(time: Option<&TimeToConvert>) -> Vec<TimeBucket> {
    let Some(time) = time else {
        return Vec::new();
    };
    let mut min_seconds = 0;
    BUCKETS
        .iter()
        .zip(time.buckets)
        .map(|((label, upper), players)| {
            let bucket = TimeBucket {
                label: (*label).to_owned(),
                min_seconds,
                max_seconds: *upper,
                players,
            };
            min_seconds = upper.unwrap_or(min_seconds);
            bucket
        })
        .collect()
}

/// Turns per-step outcomes into the response's steps.
pub(super) fn summarize(steps: &[String], outcomes: &[StepOutcome]) -> Vec<FunnelStep> {
    let players = |k: usize| outcomes.get(k).map_or(0, |o| o.players);
    let ratio = |a: i64, b: i64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    let start = players(0);
    steps
        .iter()
        .enumerate()
        .map(|(k, name)| {
            let time = outcomes.get(k).and_then(|o| o.time_to_convert.as_ref());
            FunnelStep {
                name: name.clone(),
                players: players(k),
                conversion_from_start: ratio(players(k), start),
                conversion_from_previous: if k == 0 {
                    ratio(start, start)
                } else {
                    ratio(players(k), players(k - 1))
                },
                median_seconds_from_previous: outcomes.get(k).and_then(|o| o.median_seconds),
                median_seconds_from_start: time.and_then(|t| t.median_seconds),
                time_to_convert: buckets(time),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_are_ratios_of_players() {
        let steps = vec!["a".to_owned(), "b".to_owned(), "c".to_owned()];
        let outcome = |players, median_seconds| StepOutcome {
            players,
            median_seconds,
            time_to_convert: None,
        };
        let summary = summarize(
            &steps,
            &[
                outcome(4, None),
                outcome(2, Some(30.0)),
                outcome(1, Some(5.0)),
            ],
        );
        assert_eq!(summary[0].conversion_from_start, 1.0);
        assert_eq!(summary[0].conversion_from_previous, 1.0);
        assert_eq!(summary[1].conversion_from_start, 0.5);
        assert_eq!(summary[2].conversion_from_previous, 0.5);
        assert_eq!(summary[2].conversion_from_start, 0.25);
        assert_eq!(summary[1].median_seconds_from_previous, Some(30.0));
        let empty = summarize(&steps, &[]);
        assert_eq!(
            (
                empty[0].players,
                empty[0].conversion_from_start,
                empty[1].conversion_from_previous
            ),
            (0, 0.0, 0.0)
        );
    }

    #[test]
    fn time_to_convert_buckets_have_their_bounds() {
        let time = TimeToConvert {
            median_seconds: Some(90.0),
            buckets: [1, 2, 0, 0, 0, 3],
        };
        let buckets = buckets(Some(&time));
        let bounds: Vec<(&str, i64, Option<i64>, i64)> = buckets
            .iter()
            .map(|b| (b.label.as_str(), b.min_seconds, b.max_seconds, b.players))
            .collect();
        assert_eq!(
            bounds,
            [
                ("<1m", 0, Some(60), 1),
                ("1m-10m", 60, Some(600), 2),
                ("10m-1h", 600, Some(3_600), 0),
                ("1h-1d", 3_600, Some(86_400), 0),
                ("1d-7d", 86_400, Some(604_800), 0),
                (">=7d", 604_800, None, 3),
            ]
        );
        assert!(super::buckets(None).is_empty());
    }
}
