//! Retention: cohorts of players by their first day, and how many came back on (or
//! on or after) day N. What `POST /api/v1/retention` answers and `/analytics/retention` shows.
//!
//! Two sources:
//! - activity (the default): the projector's per-cohort counts (migration 0017), kept from
//!   every player's active days. Cohort sizes and "on or after day N" read `cohort_spans`
//!   (players per cohort day and span from first to last active day: N is reached when the
//!   span is >= N); "on day N" reads `cohort_returns` (players per cohort day active on day
//!   N), one index range per N. Both read a few rows per cohort day whatever the number of
//!   players; the cohort's player list reads `player_activity`.
//! - a pair of events: the cohort is the day a player did the start event (their first time
//!   ever, or, when recurring, their first time in each cohort period) and a return is the
//!   return event on day N after that start. Read from `events`.
//!
//! Days are UTC days; day N of a player is their cohort day + N. Weeks start on Monday.
//! Every statement is bounded by the account id.

use chrono::{Datelike, Duration, Months, NaiveDate, Weekday};
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use std::collections::BTreeMap;
use utoipa::ToSchema;
use uuid::Uuid;

/// How cohorts are grouped by their first day.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Period {
    /// One cohort per UTC day.
    #[default]
    Day,
    /// One per week, Monday to Sunday.
    Week,
    /// One per calendar month.
    Month,
}

impl Period {
    /// PostgreSQL's `date_trunc` field.
    fn field(self) -> &'static str {
        match self {
            Period::Day => "day",
            Period::Week => "week",
            Period::Month => "month",
        }
    }

    /// The first day of the period holding `day`.
    pub fn start_of(self, day: NaiveDate) -> NaiveDate {
        match self {
            Period::Day => day,
            Period::Week => day.week(Weekday::Mon).first_day(),
            Period::Month => day.with_day(1).unwrap_or(day),
        }
    }

    /// The first day of the next period after the one starting at `start`, or `None` past
    /// chrono's calendar.
    pub fn next(self, start: NaiveDate) -> Option<NaiveDate> {
        match self {
            Period::Day => start.checked_add_signed(Duration::days(1)),
            Period::Week => start.checked_add_signed(Duration::days(7)),
            Period::Month => start.checked_add_months(Months::new(1)),
        }
    }

    /// The last day of the period holding `day`.
    pub fn end_of(self, day: NaiveDate) -> NaiveDate {
        self.next(self.start_of(day))
            .and_then(|next| next.pred_opt())
            .unwrap_or(day)
    }
}

/// What counts as a return on day N.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReturnMode {
    /// Active on exactly day N.
    #[default]
    On,
    /// Active on day N or any later day.
    OnOrAfter,
}

/// Which start events put a player in a cohort.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum StartKind {
    /// The player's first start event ever (one cohort per player).
    #[default]
    FirstTime,
    /// The player's first start event in each cohort period (a player may be in several).
    Recurring,
}

/// The event variant: cohorts by a start event, returns by a return event.
#[derive(Debug, Clone, PartialEq)]
pub struct EventPair {
    /// The start event's name.
    pub start: String,
    /// The return event's name.
    pub returned: String,
    /// First time or recurring.
    pub kind: StartKind,
}

/// A checked retention question.
#[derive(Debug, Clone, PartialEq)]
pub struct RetentionSpec {
    /// How cohorts group.
    pub period: Period,
    /// The first day of the first cohort (a period start).
    pub from: NaiveDate,
    /// The last day of the last cohort (a period end).
    pub to: NaiveDate,
    /// The N of "day N", ascending, without repeats.
    pub days: Vec<i32>,
    /// On day N, or on or after it.
    pub mode: ReturnMode,
    /// The event variant, or `None` for activity.
    pub events: Option<EventPair>,
}

/// One cohort's counts.
#[derive(Debug, Clone, PartialEq)]
pub struct CohortCounts {
    /// The cohort's first day.
    pub start: NaiveDate,
    /// Its players.
    pub size: i64,
    /// Players who returned, one per `spec.days`.
    pub returned: Vec<i64>,
}

/// A player of one cohort.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct CohortPlayer {
    /// The player.
    pub uuid: Uuid,
    /// Their latest name, when known.
    pub username: Option<String>,
    /// Their cohort day (first active day, or start-event day).
    pub start_day: NaiveDate,
}

/// The cohorts of `spec`, every period of the range in order (empty ones with size 0).
pub async fn retention(
    pool: &PgPool,
    account_id: Uuid,
    spec: &RetentionSpec,
) -> Result<Vec<CohortCounts>, sqlx::Error> {
    let mut cohorts: BTreeMap<NaiveDate, CohortCounts> = BTreeMap::new();
    let mut start = spec.from;
    while start <= spec.to {
        cohorts.insert(
            start,
            CohortCounts {
                start,
                size: 0,
                returned: vec![0; spec.days.len()],
            },
        );
        match spec.period.next(start) {
            Some(next) => start = next,
            None => break,
        }
    }
    match &spec.events {
        None => activity(pool, account_id, spec, &mut cohorts).await?,
        Some(pair) => events(pool, account_id, spec, pair, &mut cohorts).await?,
    }
    Ok(cohorts.into_values().collect())
}

/// (first day, bucket, players): bucket k means "last active on day >= days[k-1] but not
/// >= days[k]" (PostgreSQL's `width_bucket` over the ascending `days`).
type Reached = (NaiveDate, i32, i64);

async fn activity(
    pool: &PgPool,
    account_id: Uuid,
    spec: &RetentionSpec,
    cohorts: &mut BTreeMap<NaiveDate, CohortCounts>,
) -> Result<(), sqlx::Error> {
    // Grouped by first day, not by period, in SQL: the per-day rows are few, and Rust maps a
    // day to its period the same way for both statements.
    let spans: Vec<Reached> = sqlx::query_as(
        "SELECT first_day, width_bucket(span, $4::int[]), sum(players)::bigint
         FROM cohort_spans
         WHERE account_id = $1 AND first_day BETWEEN $2 AND $3
         GROUP BY 1, 2",
    )
    .bind(account_id)
    .bind(spec.from)
    .bind(spec.to)
    .bind(&spec.days)
    .fetch_all(pool)
    .await?;
    for (first_day, reached, players) in spans {
        let Some(row) = cohorts.get_mut(&spec.period.start_of(first_day)) else {
            continue;
        };
        row.size += players;
        if spec.mode == ReturnMode::OnOrAfter {
            // Last active on or after days[k] means active on day days[j] or later, j <= k.
            let reached = usize::try_from(reached)
                .unwrap_or(0)
                .min(row.returned.len());
            for count in &mut row.returned[..reached] {
                *count += players;
            }
        }
    }
    if spec.mode == ReturnMode::On {
        let on: Vec<(i32, NaiveDate, i64)> = sqlx::query_as(
            "SELECT day_number, first_day, players
             FROM cohort_returns
             WHERE account_id = $1 AND day_number = ANY($4::int[])
               AND first_day BETWEEN $2 AND $3",
        )
        .bind(account_id)
        .bind(spec.from)
        .bind(spec.to)
        .bind(&spec.days)
        .fetch_all(pool)
        .await?;
        for (n, first_day, players) in on {
            if let (Some(row), Some(k)) = (
                cohorts.get_mut(&spec.period.start_of(first_day)),
                spec.days.iter().position(|d| *d == n),
            ) {
                row.returned[k] += players;
            }
        }
    }
    Ok(())
}

/// The start events as (player, start day): `$1` account, `$2`/`$3` the range's first and
/// last day, `$4` the period, `$5` the start event, `$6` true for first-time.
const STARTS: &str = "
    marks AS (
        SELECT player_uuid, (occurred_at AT TIME ZONE 'UTC')::date AS day
        FROM events
        WHERE account_id = $1 AND name = $5 AND player_uuid IS NOT NULL
          AND occurred_at < (($3 + 1)::timestamp AT TIME ZONE 'UTC')
          AND ($6 OR occurred_at >= ($2::timestamp AT TIME ZONE 'UTC'))
    ),
    starts AS (
        SELECT player_uuid, min(day) AS start_day
        FROM marks
        GROUP BY player_uuid, CASE WHEN $6 THEN NULL ELSE date_trunc($4, day::timestamp) END
        HAVING min(day) >= $2
    )";

async fn events(
    pool: &PgPool,
    account_id: Uuid,
    spec: &RetentionSpec,
    pair: &EventPair,
    cohorts: &mut BTreeMap<NaiveDate, CohortCounts>,
) -> Result<(), sqlx::Error> {
    let sql = format!(
        "WITH {STARTS},
         hits AS (
             SELECT DISTINCT e.player_uuid, (e.occurred_at AT TIME ZONE 'UTC')::date AS day
             FROM events e
             WHERE e.account_id = $1 AND e.name = $7
               AND e.occurred_at >= ($2::timestamp AT TIME ZONE 'UTC')
               AND e.player_uuid IN (SELECT player_uuid FROM starts)
         )
         SELECT date_trunc($4, s.start_day::timestamp)::date AS cohort, n.n,
                count(*)::bigint AS size,
                count(*) FILTER (WHERE EXISTS (
                    SELECT 1 FROM hits h
                    WHERE h.player_uuid = s.player_uuid AND h.day >= s.start_day + n.n
                      AND (NOT $9 OR h.day = s.start_day + n.n)))::bigint AS returned
         FROM starts s CROSS JOIN unnest($8::int[]) AS n(n)
         GROUP BY 1, 2"
    );
    let rows: Vec<(NaiveDate, i32, i64, i64)> = sqlx::query_as(&sql)
        .bind(account_id)
        .bind(spec.from)
        .bind(spec.to)
        .bind(spec.period.field())
        .bind(&pair.start)
        .bind(pair.kind == StartKind::FirstTime)
        .bind(&pair.returned)
        .bind(&spec.days)
        .bind(spec.mode == ReturnMode::On)
        .fetch_all(pool)
        .await?;
    for (cohort, n, size, returned) in rows {
        if let (Some(row), Some(k)) = (
            cohorts.get_mut(&cohort),
            spec.days.iter().position(|d| *d == n),
        ) {
            // Every N row of a cohort carries the same size.
            row.size = size;
            row.returned[k] = returned;
        }
    }
    Ok(())
}

/// Up to `limit` players of the cohort starting at `cohort` (a period start), by cohort day
/// then uuid.
pub async fn cohort_players(
    pool: &PgPool,
    account_id: Uuid,
    spec: &RetentionSpec,
    cohort: NaiveDate,
    limit: i64,
) -> Result<Vec<CohortPlayer>, sqlx::Error> {
    let (first, last) = (cohort, spec.period.end_of(cohort));
    match &spec.events {
        None => {
            sqlx::query_as(
                "SELECT a.player_uuid AS uuid, p.username, a.first_day AS start_day
                 FROM player_activity a
                 LEFT JOIN players p ON p.account_id = a.account_id AND p.uuid = a.player_uuid
                 WHERE a.account_id = $1 AND a.first_day BETWEEN $2 AND $3
                 ORDER BY a.first_day, a.player_uuid
                 LIMIT $4",
            )
            .bind(account_id)
            .bind(first)
            .bind(last)
            .bind(limit)
            .fetch_all(pool)
            .await
        }
        Some(pair) => {
            let sql = format!(
                "WITH {STARTS}
                 SELECT s.player_uuid AS uuid, p.username, s.start_day
                 FROM starts s
                 LEFT JOIN players p ON p.account_id = $1 AND p.uuid = s.player_uuid
                 ORDER BY s.start_day, s.player_uuid
                 LIMIT $7"
            );
            sqlx::query_as(&sql)
                .bind(account_id)
                .bind(first)
                .bind(last)
                .bind(spec.period.field())
                .bind(&pair.start)
                .bind(pair.kind == StartKind::FirstTime)
                .bind(limit)
                .fetch_all(pool)
                .await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(text: &str) -> NaiveDate {
        text.parse().expect("a test day")
    }

    #[test]
    fn weeks_start_on_monday_and_months_end_on_their_last_day() {
        // 2025-03-05 is a Wednesday.
        assert_eq!(Period::Week.start_of(day("2025-03-05")), day("2025-03-03"));
        assert_eq!(Period::Week.end_of(day("2025-03-05")), day("2025-03-09"));
        // A Sunday is the end of its week, not the start of the next.
        assert_eq!(Period::Week.start_of(day("2025-03-09")), day("2025-03-03"));
        assert_eq!(Period::Month.end_of(day("2024-02-10")), day("2024-02-29"));
        assert_eq!(Period::Month.end_of(day("2025-02-10")), day("2025-02-28"));
        assert_eq!(Period::Month.start_of(day("2025-12-31")), day("2025-12-01"));
        assert_eq!(
            Period::Month.next(day("2025-12-01")),
            Some(day("2026-01-01"))
        );
        assert_eq!(Period::Day.end_of(day("2025-03-05")), day("2025-03-05"));
    }
}
