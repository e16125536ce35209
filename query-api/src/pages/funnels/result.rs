//! The Funnels page's result, in words and tables: a bar per step, time to convert (median
//! and buckets) per later step, the breakdown by a property and a page of the players who
//! dropped off (each a link to their Investigate page).

use crate::funnel::time_to_convert::BUCKETS;
use crate::pages::display;
use crate::routes::funnels::response::{BreakdownKind, FunnelDropOff, FunnelResult};
use crate::routes::funnels::{FunnelStep, response::FunnelBreakdown};

/// One bar of the result.
#[derive(Clone)]
pub(super) struct Bar {
    pub(super) name: String,
    pub(super) players: i64,
    /// The bar's scale: the most players of any step (at least 1).
    pub(super) most: i64,
    /// "2 players".
    pub(super) players_text: String,
    /// Conversions and the median time, in words.
    pub(super) stats: String,
}

/// Time to convert to one later step.
#[derive(Clone)]
pub(super) struct TimeRow {
    /// "2. quest_completed".
    pub(super) step: String,
    /// The median from step 1, in words.
    pub(super) median: String,
    /// Players per bucket of [`BUCKETS`].
    pub(super) buckets: Vec<i64>,
}

/// One breakdown row.
#[derive(Clone)]
pub(super) struct BreakdownLine {
    /// The value, `other` or `(none)`.
    pub(super) label: String,
    /// Players per step.
    pub(super) players: Vec<i64>,
    /// Last step's players / first step's, in words.
    pub(super) conversion: String,
}

/// The breakdown table.
#[derive(Clone)]
pub(super) struct BreakdownView {
    pub(super) property: String,
    pub(super) rows: Vec<BreakdownLine>,
}

/// A player who dropped off.
#[derive(Clone)]
pub(super) struct DroppedLine {
    pub(super) uuid: String,
    pub(super) entered: String,
    pub(super) last_step: String,
}

/// The drop-off list.
#[derive(Clone)]
pub(super) struct DropOffView {
    /// The step they reached last (1-based) and its name.
    pub(super) step: usize,
    pub(super) step_name: String,
    /// The step they did not reach.
    pub(super) next_name: String,
    pub(super) total: i64,
    pub(super) players: Vec<DroppedLine>,
    /// The next page's cursor.
    pub(super) next_after: Option<String>,
}

/// Everything the result section shows.
#[derive(Clone)]
pub(super) struct ResultView {
    pub(super) bars: Vec<Bar>,
    pub(super) step_names: Vec<String>,
    pub(super) bucket_labels: Vec<&'static str>,
    pub(super) times: Vec<TimeRow>,
    pub(super) breakdown: Option<BreakdownView>,
    pub(super) dropped: Option<DropOffView>,
}

impl ResultView {
    /// The view of a computed funnel.
    pub(super) fn of(result: &FunnelResult) -> ResultView {
        let name = |k: usize| {
            result
                .steps
                .get(k)
                .map_or(String::new(), |s| s.name.clone())
        };
        ResultView {
            bars: bars(&result.steps),
            step_names: result.steps.iter().map(|s| s.name.clone()).collect(),
            bucket_labels: BUCKETS.iter().map(|(label, _)| *label).collect(),
            times: result
                .steps
                .iter()
                .enumerate()
                .skip(1)
                .map(|(k, step)| TimeRow {
                    step: format!("{}. {}", k + 1, step.name),
                    median: duration(step.median_seconds_from_start),
                    buckets: step.time_to_convert.iter().map(|b| b.players).collect(),
                })
                .collect(),
            breakdown: result.breakdown.as_ref().map(breakdown),
            dropped: result.dropped_off.as_ref().map(|page| DropOffView {
                step: page.step,
                step_name: name(page.step.saturating_sub(1)),
                next_name: name(page.step),
                total: page.total,
                players: dropped_lines(page),
                next_after: page.next_after.map(|u| u.to_string()),
            }),
        }
    }
}

fn breakdown(breakdown: &FunnelBreakdown) -> BreakdownView {
    BreakdownView {
        property: breakdown.property.clone(),
        rows: breakdown
            .rows
            .iter()
            .map(|row| BreakdownLine {
                label: match (row.group, &row.value) {
                    (BreakdownKind::Value, Some(value)) => value.clone(),
                    (BreakdownKind::Other, _) => "other".to_owned(),
                    _ => "(none)".to_owned(),
                },
                conversion: match (row.players.first(), row.players.last()) {
                    (Some(&first), Some(&last)) if first > 0 => percent(last as f64 / first as f64),
                    _ => "—".to_owned(),
                },
                players: row.players.clone(),
            })
            .collect(),
    }
}

fn dropped_lines(page: &FunnelDropOff) -> Vec<DroppedLine> {
    page.players
        .iter()
        .map(|p| DroppedLine {
            uuid: p.player_uuid.to_string(),
            entered: display::date_time(&p.entered_at),
            last_step: display::date_time(&p.last_step_at),
        })
        .collect()
}

pub(super) fn bars(steps: &[FunnelStep]) -> Vec<Bar> {
    let most = steps.iter().map(|s| s.players).max().unwrap_or(0).max(1);
    steps
        .iter()
        .enumerate()
        .map(|(index, step)| Bar {
            name: step.name.clone(),
            players: step.players,
            most,
            players_text: format!(
                "{} {}",
                step.players,
                if step.players == 1 {
                    "player"
                } else {
                    "players"
                }
            ),
            stats: if index == 0 {
                "start of the funnel".to_owned()
            } else {
                format!(
                    "{} of start · {} of previous · median {} after previous",
                    percent(step.conversion_from_start),
                    percent(step.conversion_from_previous),
                    duration(step.median_seconds_from_previous)
                )
            },
        })
        .collect()
}

/// `50%`, `33.3%`.
pub(super) fn percent(ratio: f64) -> String {
    one_decimal(ratio * 100.0) + "%"
}

fn one_decimal(n: f64) -> String {
    let text = format!("{n:.1}");
    text.strip_suffix(".0").map_or(text.clone(), str::to_owned)
}

/// A median in the unit that reads best.
pub(super) fn duration(seconds: Option<f64>) -> String {
    match seconds {
        None => "—".to_owned(),
        Some(s) if s < 1.0 => "under 1 s".to_owned(),
        Some(s) if s < 60.0 => format!("{} s", s.round()),
        Some(s) if s < 3600.0 => format!("{} min", one_decimal(s / 60.0)),
        Some(s) if s < 86_400.0 => format!("{} h", one_decimal(s / 3600.0)),
        Some(s) => format!("{} d", one_decimal(s / 86_400.0)),
    }
}
