//! What the pages' charts draw and the tables that say the same in words.
//!
//! A chart is a `<figure data-chart="...">` holding its numbers as JSON in the attribute
//! (escaped by the template like any attribute; no inline script, so the strict CSP holds) that
//! our `assets/charts.js` draws with uPlot, and a `<table>` (in a `<details>`) with the same
//! figures, coarser, for a reader without JavaScript or with a screen reader.

use crate::queries::{ChartPoint, ChartRange, Downtime, LowTpsSpell, NetworkPoint, Stats};
use chrono::{DateTime, Duration, Utc};
use serde::Serialize;

/// One chart's data, as `charts.js` reads it.
#[derive(Debug, Serialize)]
pub struct ChartData {
    /// What the y axis measures.
    pub unit: &'static str,
    /// Bucket starts, unix seconds.
    pub x: Vec<i64>,
    /// The lines, in uPlot's order (x is series 0).
    pub series: Vec<Series>,
    /// `[upper, lower]` series indexes to fill between (the min-max band), when there is one.
    pub band: Option<[usize; 2]>,
    /// Spans to shade: downtime and low-TPS spells.
    pub marks: Vec<Mark>,
}

/// One line.
#[derive(Debug, Serialize)]
pub struct Series {
    /// Its name in the legend.
    pub label: &'static str,
    /// One value per x; null where there was no sample.
    pub values: Vec<Option<f64>>,
}

/// A span of the chart to shade.
#[derive(Debug, Serialize)]
pub struct Mark {
    /// `down` or `slow`.
    pub kind: &'static str,
    /// Unix seconds.
    pub from: i64,
    /// Unix seconds.
    pub to: i64,
}

/// The network's players online (one line), to two decimals: the figures its table
/// ([`network_rows`]) prints.
pub fn network(points: &[NetworkPoint]) -> ChartData {
    ChartData {
        unit: "players",
        x: points.iter().map(|p| p.at.timestamp()).collect(),
        series: vec![Series {
            label: "Players online",
            values: points.iter().map(|p| p.players.map(hundredths)).collect(),
        }],
        band: None,
        marks: Vec::new(),
    }
}

/// One measure of a server chart: the average line inside its min-max band, with downtime
/// and low-TPS spells shaded (`to` is the chart's end, for downtime still going on).
pub fn band(
    unit: &'static str,
    points: &[ChartPoint],
    measure: impl Fn(&ChartPoint) -> Option<Stats>,
    (downtime, low_tps, to): (&[Downtime], &[LowTpsSpell], DateTime<Utc>),
) -> ChartData {
    let pick = |f: fn(&Stats) -> f64| points.iter().map(|p| measure(p).map(|s| f(&s))).collect();
    let mut marks: Vec<Mark> = downtime
        .iter()
        .map(|d| Mark {
            kind: "down",
            from: d.from.timestamp(),
            to: d.to.unwrap_or(to).timestamp(),
        })
        .collect();
    marks.extend(low_tps.iter().map(|s| Mark {
        kind: "slow",
        from: s.from.timestamp(),
        to: s.to.timestamp(),
    }));
    ChartData {
        unit,
        x: points.iter().map(|p| p.at.timestamp()).collect(),
        series: vec![
            Series {
                label: "Average",
                values: pick(|s| s.avg),
            },
            Series {
                label: "Lowest",
                values: pick(|s| s.min),
            },
            Series {
                label: "Highest",
                values: pick(|s| s.max),
            },
        ],
        band: Some([3, 2]),
        marks,
    }
}

/// One row of the players-online table: one point of the network chart.
#[derive(Debug, Clone, PartialEq)]
pub struct NetworkRow {
    /// Start of the five-minute bucket.
    pub from: DateTime<Utc>,
    /// Players online, as the chart draws it (`no data` when no server sent a heartbeat).
    pub players: String,
}

/// The network chart's own points as table rows: the same figures the chart draws and its
/// tooltip gives (whole numbers whole, others to two decimals).
pub fn network_rows(points: &[NetworkPoint]) -> Vec<NetworkRow> {
    points
        .iter()
        .map(|p| NetworkRow {
            from: p.at,
            players: p
                .players
                .map_or_else(|| "no data".to_owned(), |v| hundredths(v).to_string()),
        })
        .collect()
}

/// `value` rounded to two decimals. Rust and JavaScript both print the shortest decimal of a
/// float (`24.33`, `24`), so the table and the chart's tooltip read the same.
fn hundredths(value: f64) -> f64 {
    (value * 100.0).round() / 100.0
}

/// One row of a server chart's table: several buckets merged.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRow {
    /// Start of its first bucket.
    pub from: DateTime<Utc>,
    /// TPS over the row (min of minimums, sample-weighted mean, max of maximums).
    pub tps: Option<Stats>,
    /// Players over the row.
    pub players: Option<Stats>,
}

/// How wide one table row is for `range`: 12 to 30 rows whatever the range.
pub fn row_width(range: ChartRange) -> Duration {
    match range {
        ChartRange::Hour => Duration::minutes(5),
        ChartRange::Day => Duration::hours(1),
        ChartRange::Week => Duration::hours(6),
        ChartRange::Month => Duration::days(1),
    }
}

/// The chart's buckets merged into rows of [`row_width`].
pub fn summarize(points: &[ChartPoint], range: ChartRange) -> Vec<SummaryRow> {
    let per_row = (row_width(range).num_seconds() / range.bucket().num_seconds()).max(1);
    points
        .chunks(usize::try_from(per_row).unwrap_or(1))
        .filter_map(|chunk| {
            Some(SummaryRow {
                from: chunk.first()?.at,
                tps: merge(chunk, |p| p.tps),
                players: merge(chunk, |p| p.players),
            })
        })
        .collect()
}

fn merge(chunk: &[ChartPoint], measure: impl Fn(&ChartPoint) -> Option<Stats>) -> Option<Stats> {
    let (mut min, mut max, mut sum, mut samples) = (f64::INFINITY, f64::NEG_INFINITY, 0.0, 0i64);
    for point in chunk {
        if let Some(stats) = measure(point) {
            min = min.min(stats.min);
            max = max.max(stats.max);
            sum += stats.avg * point.samples as f64;
            samples += point.samples;
        }
    }
    (samples > 0).then(|| Stats {
        min,
        avg: sum / samples as f64,
        max,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(at: DateTime<Utc>, samples: i64, tps: (f64, f64, f64)) -> ChartPoint {
        let stats = Stats {
            min: tps.0,
            avg: tps.1,
            max: tps.2,
        };
        ChartPoint {
            at,
            samples,
            tps: (samples > 0).then_some(stats),
            players: (samples > 0).then_some(stats),
        }
    }

    #[test]
    fn rows_merge_buckets_weighting_the_mean_by_samples() {
        let start: DateTime<Utc> = "2025-03-01T10:00:00Z".parse().expect("time");
        let minute = |m| start + Duration::minutes(m);
        let mut points: Vec<ChartPoint> = (0..60)
            .map(|m| point(minute(m), 0, (0.0, 0.0, 0.0)))
            .collect();
        points[0] = point(minute(0), 1, (10.0, 10.0, 10.0));
        points[1] = point(minute(1), 3, (19.0, 20.0, 20.0));
        let rows = summarize(&points, ChartRange::Hour);
        assert_eq!(rows.len(), 12);
        assert_eq!(
            rows[0].tps,
            Some(Stats {
                min: 10.0,
                avg: 17.5,
                max: 20.0
            })
        );
        assert_eq!(rows[1].tps, None, "no samples: no figures, not zeros");
        assert_eq!(rows[1].from, minute(5));
    }

    #[test]
    fn every_range_has_a_table_of_a_readable_length() {
        for (range, rows) in [
            (ChartRange::Hour, 12),
            (ChartRange::Day, 24),
            (ChartRange::Week, 28),
            (ChartRange::Month, 30),
        ] {
            let per_row = row_width(range).num_seconds() / range.bucket().num_seconds();
            assert_eq!(range.buckets() as i64 / per_row, rows, "{range:?}");
        }
    }

    #[test]
    fn the_network_table_is_the_charts_own_points() {
        let start: DateTime<Utc> = "2025-03-01T10:00:00Z".parse().expect("time");
        let points: Vec<NetworkPoint> = [Some(24.0), Some(73.0 / 3.0), None]
            .into_iter()
            .enumerate()
            .map(|(i, players)| NetworkPoint {
                at: start + Duration::minutes(5 * i as i64),
                players,
            })
            .collect();
        let rows = network_rows(&points);
        let chart = network(&points);
        assert_eq!(chart.series[0].values, [Some(24.0), Some(24.33), None]);
        let text: Vec<&str> = rows.iter().map(|r| r.players.as_str()).collect();
        assert_eq!(text, ["24", "24.33", "no data"]);
        assert_eq!(rows[2].from, start + Duration::minutes(10));
    }
}
