//! `POST /api/v1/retention`: cohorts of players by first day (or by a start event)
//! and how many came back on day N, or on or after it.
//!
//! This file checks the request and shapes the response; [`crate::queries::retention`]
//! computes it (the semantics and the read model are documented there).

use crate::auth::{DashboardCaller, DashboardRoutes};
use crate::error::ApiError;
use crate::extract::ApiJson;
use crate::queries::retention::{
    self, CohortCounts, EventPair, Period, RetentionSpec, ReturnMode, StartKind,
};
use crate::state::AppState;
use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};
use chrono::{Duration, Months, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use shared::event_name::EventName;
use shared::problem::Problem;
use shared::validation::FieldErrors;
use utoipa::ToSchema;
use uuid::Uuid;

/// Most cohorts (periods) one request may cover.
pub const MAX_COHORTS: usize = 400;
/// Most values of N in one request.
pub const MAX_DAYS: usize = 12;
/// The largest N.
pub const MAX_DAY_NUMBER: i32 = 365;
/// N when the request names none: D1, D7, D30.
pub const DEFAULT_DAYS: [i32; 3] = [1, 7, 30];

/// A retention question.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RetentionRequest {
    /// Cohorts per `day` (default), `week` (Monday to Sunday) or `month`, all in UTC.
    #[serde(default)]
    pub period: Period,
    /// First day of the first cohort, UTC (moved back to the start of its week or month).
    /// Default: 30 days, 12 weeks or 12 months before `to`. Not after `to` (422), which is
    /// today when absent.
    #[serde(default)]
    pub from: Option<NaiveDate>,
    /// Last day of the last cohort, UTC (moved on to the end of its week or month). Default:
    /// today. At most 400 cohorts from `from` to `to`.
    #[serde(default)]
    pub to: Option<NaiveDate>,
    /// The N of "returned on day N" (0 to 365; default [1, 7, 30]), day 0 being the cohort
    /// day. Answered in ascending order, each once.
    #[serde(
        default = "default_days",
        deserialize_with = "shared::whole_number::deserialize"
    )]
    #[schema(min_items = 1, max_items = 12)]
    pub days: Vec<i64>,
    /// `on` (default): active on day N exactly; `on_or_after`: on day N or any later day.
    #[serde(default)]
    pub mode: ReturnMode,
    /// Cohorts by a start event and returns by a return event instead of by activity.
    #[serde(default)]
    pub events: Option<RetentionEvents>,
}

fn default_days() -> Vec<i64> {
    DEFAULT_DAYS.map(i64::from).to_vec()
}

impl Default for RetentionRequest {
    fn default() -> Self {
        RetentionRequest {
            period: Period::Day,
            from: None,
            to: None,
            days: default_days(),
            mode: ReturnMode::On,
            events: None,
        }
    }
}

/// The event variant of retention.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RetentionEvents {
    /// The custom event that puts a player in the cohort of its day, e.g. `quest_started`.
    #[schema(pattern = "^(?!session_|punish_|chat_|rank_|block_)[a-z0-9_]{1,64}$")]
    pub start: String,
    /// The event (custom or internal) that counts as a return, e.g. `quest_completed`.
    #[serde(rename = "return")]
    #[schema(pattern = "^[a-z0-9_]{1,64}$")]
    pub return_event: String,
    /// `first_time` (default): the player's first start event ever; `recurring`: their first
    /// in each cohort period.
    #[serde(default)]
    pub kind: StartKind,
}

/// One cohort's returns on one day N.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct CohortReturn {
    /// N.
    pub day: i32,
    /// Players of the cohort who returned.
    pub players: i64,
    /// players / cohort size (0 for an empty cohort).
    pub fraction: f64,
    /// False while day N of some player of the cohort is today or still ahead: the count
    /// may still grow.
    pub complete: bool,
}

/// One cohort.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Cohort {
    /// Its first day.
    pub start: NaiveDate,
    /// Its last day.
    pub end: NaiveDate,
    /// Its players.
    pub size: i64,
    /// One entry per N of `days`, in that order.
    pub returned: Vec<CohortReturn>,
}

/// The answer.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RetentionResult {
    /// The period asked for.
    pub period: Period,
    /// The mode asked for.
    pub mode: ReturnMode,
    /// The first cohort's first day.
    pub from: NaiveDate,
    /// The last cohort's last day.
    pub to: NaiveDate,
    /// The N answered, ascending.
    pub days: Vec<i32>,
    /// Every cohort of the range, oldest first (empty ones included, with size 0).
    pub cohorts: Vec<Cohort>,
}

/// The routes of this resource.
pub fn router() -> DashboardRoutes {
    Router::new().route("/api/v1/retention", post(compute_retention))
}

/// The default range's start: 30 days, 12 weeks or 12 months before `to`.
fn default_from(period: Period, to: NaiveDate) -> NaiveDate {
    let back = match period {
        Period::Day => to.checked_sub_signed(Duration::days(29)),
        Period::Week => to.checked_sub_signed(Duration::weeks(11)),
        Period::Month => to.checked_sub_months(Months::new(11)),
    };
    back.unwrap_or(to)
}

/// Checks `request` (every field error at once) against `today`.
pub fn validate(request: RetentionRequest, today: NaiveDate) -> Result<RetentionSpec, ApiError> {
    let mut errors = FieldErrors::new();
    let period = request.period;
    let to = period.end_of(request.to.unwrap_or(today));
    let from = period.start_of(request.from.unwrap_or_else(|| default_from(period, to)));
    if from > to {
        errors.push("from", "out_of_range", "from must not be after to");
    } else if cohorts_between(period, from, to) > MAX_COHORTS {
        errors.push(
            "to",
            "out_of_range",
            format!("at most {MAX_COHORTS} cohorts ({period:?} periods) from `from` to `to`"),
        );
    }
    let mut days: Vec<i32> = Vec::new();
    let mut asked = request.days;
    if !(1..=MAX_DAYS).contains(&asked.len()) {
        errors.push(
            "days",
            "invalid_length",
            format!("between 1 and {MAX_DAYS} values of N"),
        );
        // One error for the list, not one per value of an overlong one.
        asked.clear();
    }
    for (index, n) in asked.iter().enumerate() {
        match i32::try_from(*n) {
            Ok(n) if (0..=MAX_DAY_NUMBER).contains(&n) => days.push(n),
            _ => errors.push(
                &format!("days[{index}]"),
                "out_of_range",
                format!("must be 0 to {MAX_DAY_NUMBER}"),
            ),
        }
    }
    days.sort_unstable();
    days.dedup();
    let events = request.events.map(|pair| {
        if let Err(error) = EventName::parse(&pair.start) {
            let message = match error.code() {
                "reserved_prefix" => "the start event must be a custom event".to_owned(),
                _ => error.to_string(),
            };
            errors.push("events.start", error.code(), message);
        }
        if let Err(error) = EventName::parse_lookup(&pair.return_event) {
            errors.push("events.return", error.code(), error.to_string());
        }
        EventPair {
            start: pair.start,
            returned: pair.return_event,
            kind: pair.kind,
        }
    });
    errors.into_result().map_err(ApiError::invalid)?;
    Ok(RetentionSpec {
        period,
        from,
        to,
        days,
        mode: request.mode,
        events,
    })
}

/// How many cohorts [from, to] holds, counting no further than one past [`MAX_COHORTS`].
fn cohorts_between(period: Period, from: NaiveDate, to: NaiveDate) -> usize {
    let mut count = 0;
    let mut start = Some(from);
    while let Some(day) = start.filter(|day| *day <= to) {
        count += 1;
        if count > MAX_COHORTS {
            break;
        }
        start = period.next(day);
    }
    count
}

/// Compute retention cohorts over the account's players.
#[utoipa::path(post, path = "/api/v1/retention", tag = "events",
    security(("dashboard_key" = [])),
    request_body = RetentionRequest,
    responses(
        (status = 200, description = "One row per cohort: its size and returns per day N", body = RetentionResult),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not a dashboard key", body = Problem),
        (status = 422, description = "Invalid period range, days or events", body = Problem),
    ))]
pub async fn compute_retention(
    DashboardCaller(caller): DashboardCaller,
    State(state): State<AppState>,
    ApiJson(request): ApiJson<RetentionRequest>,
) -> Result<Json<RetentionResult>, ApiError> {
    let spec = validate(request, Utc::now().date_naive())?;
    Ok(Json(run(&state, caller.account_id, &spec).await?))
}

/// Computes a checked question over `account_id`'s players: what the API answers and the
/// Retention page ([`crate::pages::analytics::retention`]) shows.
pub async fn run(
    state: &AppState,
    account_id: Uuid,
    spec: &RetentionSpec,
) -> Result<RetentionResult, ApiError> {
    let counts = retention::retention(&state.reads, account_id, spec).await?;
    Ok(shape(spec, counts, Utc::now().date_naive()))
}

/// The response of `counts`, with each cell's fraction and completeness as of `today`.
pub fn shape(spec: &RetentionSpec, counts: Vec<CohortCounts>, today: NaiveDate) -> RetentionResult {
    let cohorts = counts
        .into_iter()
        .map(|c| {
            let end = spec.period.end_of(c.start);
            let returned = spec
                .days
                .iter()
                .zip(&c.returned)
                .map(|(&day, &players)| CohortReturn {
                    day,
                    players,
                    fraction: if c.size == 0 {
                        0.0
                    } else {
                        players as f64 / c.size as f64
                    },
                    complete: end
                        .checked_add_signed(Duration::days(i64::from(day)))
                        .is_some_and(|last| last < today),
                })
                .collect();
            Cohort {
                start: c.start,
                end,
                size: c.size,
                returned,
            }
        })
        .collect();
    RetentionResult {
        period: spec.period,
        mode: spec.mode,
        from: spec.from,
        to: spec.to,
        days: spec.days.clone(),
        cohorts,
    }
}

#[cfg(test)]
#[path = "retention_tests.rs"]
mod tests;
