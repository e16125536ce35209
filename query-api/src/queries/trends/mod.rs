//! Trends: how often an event happened (or how many players did it) per UTC hour,
//! day or week, optionally per property value or server, against the period before. What
//! `POST /api/v1/trends` answers and the `/analytics/trends` page draws.
//!
//! Buckets are UTC: a day starts at 00:00Z and a week on Monday 00:00Z (ISO weeks). The range
//! is widened to whole buckets ([`TrendSpec::new`]); the previous period is the same number
//! of buckets right before it. "Unique" counts a player once per bucket however often they
//! did the event; distinct players over the whole range are not worked out (they are not the
//! sum of the buckets, and would need a scan of every player-day of the range), so a unique
//! series has no total.

mod sql;

pub use sql::TOP_VALUES;

use chrono::{DateTime, Duration, DurationRound, Utc};
use sqlx::PgPool;
use std::collections::HashMap;
use uuid::Uuid;

/// A bucket's width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bucket {
    /// One UTC hour.
    Hour,
    /// One UTC day.
    Day,
    /// One ISO week, Monday 00:00 UTC to the next Monday.
    Week,
}

impl Bucket {
    /// Its length (UTC has no daylight saving, so every bucket of a kind is as long).
    pub fn step(self) -> Duration {
        match self {
            Bucket::Hour => Duration::hours(1),
            Bucket::Day => Duration::days(1),
            Bucket::Week => Duration::weeks(1),
        }
    }

    /// The unit PostgreSQL's date_trunc takes.
    fn unit(self) -> &'static str {
        match self {
            Bucket::Hour => "hour",
            Bucket::Day => "day",
            Bucket::Week => "week",
        }
    }

    /// The start of the bucket holding `at`.
    pub fn floor(self, at: DateTime<Utc>) -> DateTime<Utc> {
        let day = at.duration_trunc(Duration::days(1)).unwrap_or(at);
        match self {
            Bucket::Hour => at.duration_trunc(Duration::hours(1)).unwrap_or(at),
            Bucket::Day => day,
            Bucket::Week => {
                let since_monday =
                    i64::from(chrono::Datelike::weekday(&day).num_days_from_monday());
                day - Duration::days(since_monday)
            }
        }
    }

    /// The first bucket start at or after `at`.
    pub fn ceil(self, at: DateTime<Utc>) -> DateTime<Utc> {
        let floor = self.floor(at);
        if floor == at { at } else { floor + self.step() }
    }
}

/// What is counted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// Timeline events with any of these names (custom, or internal such as `session_join`).
    Events(Vec<String>),
    /// Anti-cheat flags (they have no timeline event).
    Flags,
}

/// One series per value of this, or a single series.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Breakdown {
    /// One series.
    None,
    /// Per value of this property (the top [`TOP_VALUES`], then "other").
    Property(String),
    /// Per server (the top [`TOP_VALUES`], then "other").
    Server,
}

/// Events, or distinct players.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    /// Every event.
    Total,
    /// Distinct players.
    Unique,
}

/// A checked trend question with its range aligned to whole buckets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrendSpec {
    /// What is counted.
    pub subject: Subject,
    /// Bucket width.
    pub bucket: Bucket,
    /// First bucket's start.
    pub from: DateTime<Utc>,
    /// End of the last bucket (exclusive).
    pub to: DateTime<Utc>,
    /// Breakdown.
    pub breakdown: Breakdown,
    /// Events or players.
    pub measure: Measure,
    /// Also the previous period of equal length.
    pub compare: bool,
}

impl TrendSpec {
    /// A spec whose range is `[from, to)` widened to whole buckets.
    pub fn new(
        subject: Subject,
        bucket: Bucket,
        (from, to): (DateTime<Utc>, DateTime<Utc>),
        breakdown: Breakdown,
        measure: Measure,
        compare: bool,
    ) -> TrendSpec {
        TrendSpec {
            subject,
            bucket,
            from: bucket.floor(from),
            to: bucket.ceil(to),
            breakdown,
            measure,
            compare,
        }
    }

    /// The bucket starts of the range.
    pub fn buckets(&self) -> Vec<DateTime<Utc>> {
        let mut starts = Vec::new();
        let mut at = self.from;
        while at < self.to {
            starts.push(at);
            at += self.bucket.step();
        }
        starts
    }

    /// The previous period: as many buckets, ending where this range starts.
    pub fn previous_from(&self) -> DateTime<Utc> {
        self.from - (self.to - self.from)
    }
}

/// One line of the chart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Series {
    /// The breakdown value (a property value, or a server id; "" for events without a
    /// server); None for the single series and for "other".
    pub key: Option<String>,
    /// True for the series that gathers every value outside the top ones.
    pub other: bool,
    /// One value per bucket of the range.
    pub values: Vec<i64>,
    /// The sum of `values` (None when unique: see the module's doc).
    pub total: Option<i64>,
    /// The previous period's values, bucket by bucket (when comparing).
    pub previous: Option<Vec<i64>>,
    /// The previous period's total (when comparing, and not unique).
    pub previous_total: Option<i64>,
}

/// A computed trend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trend {
    /// The bucket starts.
    pub buckets: Vec<DateTime<Utc>>,
    /// The series: the single one, or the top values by total (largest first) then "other".
    pub series: Vec<Series>,
}

/// One row of the statement.
#[derive(Debug, sqlx::FromRow)]
struct Row {
    bucket: DateTime<Utc>,
    current: bool,
    series: Option<String>,
    other: bool,
    value: i64,
}

/// Computes `spec` over `account_id`'s rows only.
pub async fn trend(
    reads: &PgPool,
    account_id: Uuid,
    spec: &TrendSpec,
) -> Result<Trend, sqlx::Error> {
    let start = if spec.compare {
        spec.previous_from()
    } else {
        spec.from
    };
    let statement = sql::statement(spec);
    let mut query = sqlx::query_as::<_, Row>(&statement)
        .bind(account_id)
        .bind(start)
        .bind(spec.to)
        .bind(spec.bucket.unit())
        .bind(spec.from);
    if let Subject::Events(names) = &spec.subject {
        query = query.bind(names.clone());
    }
    if let Breakdown::Property(property) = &spec.breakdown {
        query = query.bind(property.clone());
    }
    let rows = query.fetch_all(reads).await?;
    Ok(assemble(spec, &rows))
}

/// Puts the rows in series and buckets; a bucket without a row is 0.
fn assemble(spec: &TrendSpec, rows: &[Row]) -> Trend {
    let buckets = spec.buckets();
    let step = spec.bucket.step().num_seconds();
    let previous_from = spec.previous_from();
    let empty = |key: Option<String>, other: bool| Series {
        key,
        other,
        values: vec![0; buckets.len()],
        total: None,
        previous: spec.compare.then(|| vec![0; buckets.len()]),
        previous_total: None,
    };
    let mut by_series: HashMap<(Option<String>, bool), Series> = HashMap::new();
    for row in rows {
        let series = by_series
            .entry((row.series.clone(), row.other))
            .or_insert_with(|| empty(row.series.clone(), row.other));
        let (start, values) = if row.current {
            (spec.from, Some(&mut series.values))
        } else {
            (previous_from, series.previous.as_mut())
        };
        let index = usize::try_from((row.bucket - start).num_seconds() / step).ok();
        if let Some(value) = values.zip(index).and_then(|(v, i)| v.get_mut(i)) {
            *value = row.value;
        }
    }
    let mut series: Vec<Series> = by_series.into_values().collect();
    if spec.breakdown == Breakdown::None && series.is_empty() {
        series.push(empty(None, false));
    }
    if spec.measure == Measure::Total {
        for s in &mut series {
            s.total = Some(s.values.iter().sum());
            s.previous_total = s.previous.as_ref().map(|p| p.iter().sum());
        }
    }
    // Largest first (by the sum of the buckets), "other" last, ties by value.
    let weight = |s: &Series| std::cmp::Reverse(s.values.iter().sum::<i64>());
    series.sort_by(|a, b| (a.other, weight(a), &a.key).cmp(&(b.other, weight(b), &b.key)));
    Trend { buckets, series }
}

/// Server names for the server keys of `trend` (id text -> name), for labels.
pub async fn server_names(
    reads: &PgPool,
    account_id: Uuid,
    trend: &Trend,
) -> Result<HashMap<String, String>, sqlx::Error> {
    let ids: Vec<Uuid> = trend
        .series
        .iter()
        .filter_map(|s| s.key.as_deref().and_then(|k| k.parse().ok()))
        .collect();
    let rows: Vec<(Uuid, String)> = sqlx::query_as(
        "SELECT id, name FROM servers WHERE account_id = $1 AND id = ANY($2) AND name IS NOT NULL",
    )
    .bind(account_id)
    .bind(ids)
    .fetch_all(reads)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(id, name)| (id.to_string(), name))
        .collect())
}

#[cfg(test)]
mod tests;
