//! `POST /api/v1/funnels`: how many players went from a custom event through later steps.
//!
//! This file checks the request, [`response`] shapes the response and [`extras`] holds the
//! optional parts (breakdown, drop-off list); [`crate::funnel`] computes it (the semantics of
//! each order are documented in `funnel::journey`).

pub mod extras;
pub mod response;

use crate::auth::{DashboardCaller, DashboardRoutes};
use crate::error::ApiError;
use crate::extract::ApiJson;
use crate::funnel::{self, Extras, FunnelOrder, FunnelSpec};
use crate::state::AppState;
use crate::team::Visibility;
use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};
use chrono::{DateTime, Duration, Utc};
pub use extras::{BreakdownRequest, DropOffRequest};
pub use response::{FunnelResult, FunnelStep};
use serde::Deserialize;
use shared::event_name::EventName;
use shared::problem::Problem;
use shared::validation::{EARLIEST_QUERY_SECS, FieldErrors, LATEST_TIME_SECS};
use utoipa::ToSchema;
use uuid::Uuid;

/// Default conversion window: 7 days.
pub const DEFAULT_WINDOW_SECONDS: i64 = 7 * 24 * 3600;
/// Longest conversion window: 90 days.
pub const MAX_WINDOW_SECONDS: i64 = 90 * 24 * 3600;
/// Default time range when `from` is omitted: the 30 days before `to`.
const DEFAULT_RANGE_DAYS: i64 = 30;

/// A funnel to compute.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FunnelRequest {
    /// 2..=10 event names; the first is a custom event, later ones may be internal.
    #[schema(min_items = 2, max_items = 10)]
    pub steps: Vec<String>,
    /// Each player's steps must happen within this many seconds of the first (default 7 days,
    /// at most 90 days).
    #[serde(
        default = "default_window",
        deserialize_with = "shared::whole_number::deserialize"
    )]
    #[schema(minimum = 1, maximum = 7776000)]
    pub window_seconds: i64,
    /// First-step events at or after this time (default: 30 days before `to`).
    #[serde(default, deserialize_with = "shared::date_time::deserialize")]
    pub from: Option<DateTime<Utc>>,
    /// First-step events before this time (default: now).
    #[serde(default, deserialize_with = "shared::date_time::deserialize")]
    pub to: Option<DateTime<Utc>>,
    /// `sequential` (default), `strict` or `any`.
    #[serde(default)]
    pub order: FunnelOrder,
    /// Optional: break the counts down by a property of each player's first-step event
    /// (reads each entry's properties, so it costs more than the counts alone).
    #[serde(default)]
    pub breakdown: Option<BreakdownRequest>,
    /// Optional: a page of the players who reached a step but not the next one.
    #[serde(default)]
    pub dropped_off: Option<DropOffRequest>,
}

fn default_window() -> i64 {
    DEFAULT_WINDOW_SECONDS
}

/// The routes of this resource.
pub fn router() -> DashboardRoutes {
    Router::new().route("/api/v1/funnels", post(compute_funnel))
}

fn validate(request: FunnelRequest, now: DateTime<Utc>) -> Result<(FunnelSpec, Extras), ApiError> {
    let mut errors = FieldErrors::new();
    if !(2..=10).contains(&request.steps.len()) {
        errors.push("steps", "invalid_length", "a funnel has 2 to 10 steps");
    }
    if let Some(first) = request.steps.first()
        && let Err(error) = EventName::parse(first)
    {
        let message = match error.code() {
            "reserved_prefix" => {
                "the first step must be a custom event, not an internal one".to_owned()
            }
            _ => error.to_string(),
        };
        errors.push("steps[0]", error.code(), message);
    }
    // Later steps may be internal events (`session_start`, ...): looked up, not sent.
    for (index, step) in request.steps.iter().enumerate().skip(1) {
        if let Err(error) = EventName::parse_lookup(step) {
            errors.push(&format!("steps[{index}]"), error.code(), error.to_string());
        }
    }
    if !(1..=MAX_WINDOW_SECONDS).contains(&request.window_seconds) {
        errors.push(
            "window_seconds",
            "out_of_range",
            format!("must be 1 to {MAX_WINDOW_SECONDS}"),
        );
    }
    let to = request.to.unwrap_or(now);
    let from = request.from.unwrap_or_else(|| default_from(to));
    let in_range = check_range(&mut errors, &request, from, to);
    if in_range && from >= to {
        errors.push("from", "out_of_range", "from must be before to");
    }
    let extras = extras::check(
        &mut errors,
        request.steps.len(),
        request.breakdown,
        request.dropped_off,
    );
    errors.into_result().map_err(ApiError::invalid)?;
    let spec = FunnelSpec {
        steps: request.steps,
        window_seconds: request.window_seconds,
        from,
        to,
        order: request.order,
    };
    Ok((spec, extras))
}

/// The earliest `from` or `to` a funnel takes (shared with every query's time bounds).
fn earliest_time() -> DateTime<Utc> {
    DateTime::<Utc>::from_timestamp(EARLIEST_QUERY_SECS, 0).unwrap_or(DateTime::<Utc>::MIN_UTC)
}

/// The latest instant a funnel may read up to, `to + window_seconds` included: the last second
/// of year 9999. Checked before any arithmetic, so no sum of a time and a window can leave
/// what chrono, the COPY statement's RFC 3339 literals and PostgreSQL hold.
fn latest_time() -> DateTime<Utc> {
    DateTime::<Utc>::from_timestamp(LATEST_TIME_SECS, 0).unwrap_or(DateTime::<Utc>::MAX_UTC)
}

/// 30 days before `to`, but never before [`earliest_time`].
fn default_from(to: DateTime<Utc>) -> DateTime<Utc> {
    to.checked_sub_signed(Duration::days(DEFAULT_RANGE_DAYS))
        .filter(|from| *from >= earliest_time())
        .unwrap_or_else(earliest_time)
}

/// Refuses a `from` or `to` outside 1970..=9999 ([`FieldErrors::query_time`]), and a `to`
/// whose window would end past year 9999; true when the range is usable.
fn check_range(
    errors: &mut FieldErrors,
    request: &FunnelRequest,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> bool {
    let mut bounds = FieldErrors::new();
    bounds.query_time("from", Some(from));
    bounds.query_time("to", Some(to));
    if let Err(found) = bounds.into_result() {
        for error in found {
            errors.push(&error.field, &error.code, error.message);
        }
        return false;
    }
    if (1..=MAX_WINDOW_SECONDS).contains(&request.window_seconds)
        && to
            .checked_add_signed(Duration::seconds(request.window_seconds))
            .is_none_or(|end| end > latest_time())
    {
        errors.push(
            "to",
            "out_of_range",
            "to plus window_seconds must not pass 9999-12-31T23:59:59Z",
        );
        return false;
    }
    true
}

/// Compute a funnel over the account's events.
#[utoipa::path(post, path = "/api/v1/funnels", tag = "events",
    security(("dashboard_key" = [])),
    request_body = FunnelRequest,
    responses(
        (status = 200, description = "Players, conversion and time to convert per step; the breakdown and drop-off list when asked for", body = FunnelResult),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not a dashboard key", body = Problem),
        (status = 422, description = "Invalid steps, window, range, breakdown or drop-off step", body = Problem),
    ))]
pub async fn compute_funnel(
    DashboardCaller(caller): DashboardCaller,
    State(state): State<AppState>,
    ApiJson(request): ApiJson<FunnelRequest>,
) -> Result<Json<FunnelResult>, ApiError> {
    let reader = (caller.account_id, Visibility::KEY);
    Ok(Json(run(&state, reader, request).await?))
}

/// Checks `request` (422 with every field error) and computes it over `account_id`'s events:
/// what the API answers and the Funnels page (`crate::pages::funnels`) shows. A breakdown by
/// a property of a first step whose values `visibility` may not see is refused (403
/// `withheld_for_role`; the first step is a custom event today, whose values every role sees).
pub async fn run(
    state: &AppState,
    (account_id, visibility): (Uuid, Visibility),
    request: FunnelRequest,
) -> Result<FunnelResult, ApiError> {
    let (spec, extras) = validate(request, Utc::now())?;
    if extras.breakdown.is_some() {
        let first = spec.steps.first().map(String::as_str);
        visibility
            .breakdown(first)
            .map_err(crate::routes::trends::withheld)?;
    }
    let steps = spec.steps.clone();
    let property = extras.breakdown.as_ref().map(|b| b.property.clone());
    let report = funnel::compute_report(
        &state.reads,
        account_id,
        spec,
        extras,
        state.funnel_parallelism,
    )
    .await
    .map_err(|error| ApiError::Internal(error.into()))?;
    Ok(response::shape(&steps, report, property))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(steps: &[&str]) -> FunnelRequest {
        FunnelRequest {
            steps: steps.iter().map(|s| s.to_string()).collect(),
            window_seconds: DEFAULT_WINDOW_SECONDS,
            from: None,
            to: None,
            order: FunnelOrder::Sequential,
            breakdown: None,
            dropped_off: None,
        }
    }

    #[test]
    fn the_first_step_must_be_a_custom_event() {
        assert!(validate(request(&["quest_started", "session_join"]), Utc::now()).is_ok());
        assert!(validate(request(&["session_join", "quest_started"]), Utc::now()).is_err());
        assert!(validate(request(&["quest_started"]), Utc::now()).is_err());
        assert!(validate(request(&["a", "B"]), Utc::now()).is_err());
        let eleven: Vec<&str> = std::iter::repeat_n("a", 11).collect();
        assert!(validate(request(&eleven), Utc::now()).is_err());
    }

    #[test]
    fn defaults_are_the_last_30_days_and_a_week_window() {
        let now = Utc::now();
        let Ok((funnel, _)) = validate(request(&["a", "b"]), now) else {
            panic!("a two-step funnel is valid");
        };
        assert_eq!(funnel.to, now);
        assert_eq!(funnel.from, now - Duration::days(30));
        assert_eq!(funnel.window_seconds, 604_800);
    }

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text)
            .expect("a time")
            .with_timezone(&Utc)
    }

    fn range_errors(request: FunnelRequest) -> Vec<String> {
        match validate(request, Utc::now()) {
            Ok(_) => Vec::new(),
            Err(ApiError::Validation { errors, .. }) => errors
                .iter()
                .map(|e| format!("{}:{}", e.field, e.code))
                .collect(),
            Err(other) => panic!("not a validation error: {other}"),
        }
    }

    #[test]
    fn the_bounds_are_1970_and_year_9999() {
        assert_eq!(earliest_time(), at("1970-01-01T00:00:00Z"));
        assert_eq!(latest_time(), at("9999-12-31T23:59:59Z"));
    }

    #[test]
    fn times_whose_window_would_pass_year_9999_are_refused() {
        let with = |from: Option<&str>, to: Option<&str>, window: i64| FunnelRequest {
            from: from.map(at),
            to: to.map(at),
            window_seconds: window,
            ..request(&["a", "b"])
        };
        // `to` at the very end of the representable range, with the default window of a week.
        assert_eq!(
            range_errors(with(None, Some("9999-12-31T23:59:59Z"), 604_800)),
            ["to:out_of_range"]
        );
        assert_eq!(
            range_errors(with(None, Some("9999-12-31T23:59:58Z"), 1)),
            Vec::<String>::new()
        );
        assert_eq!(
            range_errors(with(None, Some("9999-12-31T23:59:59Z"), 1)),
            ["to:out_of_range"]
        );
        assert_eq!(
            range_errors(with(Some("1969-12-31T23:59:59Z"), None, 60)),
            ["from:out_of_range"]
        );
        assert_eq!(
            range_errors(with(Some("1970-01-01T00:00:00Z"), None, 60)),
            Vec::<String>::new()
        );
        // A default `from` never falls before 1970.
        let Ok((spec, _)) = validate(with(None, Some("1970-01-02T00:00:00Z"), 60), Utc::now())
        else {
            panic!("a range inside 1970 is valid");
        };
        assert_eq!(spec.from, earliest_time());
        // Both ends wrong, and a bad window: every error at once, no arithmetic attempted.
        assert_eq!(
            range_errors(with(
                Some("0000-01-01T00:00:00Z"),
                Some("0000-06-01T00:00:00Z"),
                0
            )),
            [
                "window_seconds:out_of_range",
                "from:out_of_range",
                "to:out_of_range"
            ]
        );
    }
}
