//! `POST /api/v1/funnels`: how many players went from a custom event through later steps.
//!
//! Computed in PostgreSQL by `funnel_progress` (migration 0006): one query, one row per step,
//! no events pulled into the service. The semantics of each order are documented there.

use crate::auth::DashboardCaller;
use crate::error::ApiError;
use crate::extract::ApiJson;
use crate::state::AppState;
use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};
use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use shared::event_name::{EventName, is_well_formed};
use shared::problem::Problem;
use shared::validation::FieldErrors;
use utoipa::ToSchema;

/// Default conversion window: 7 days.
pub const DEFAULT_WINDOW_SECONDS: i64 = 7 * 24 * 3600;
/// Longest conversion window: 90 days.
pub const MAX_WINDOW_SECONDS: i64 = 90 * 24 * 3600;
/// Default time range when `from` is omitted: the 30 days before `to`.
const DEFAULT_RANGE_DAYS: i64 = 30;

/// How the steps must follow each other.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum FunnelOrder {
    /// In order; other events may come between.
    #[default]
    Sequential,
    /// In order, with no other custom event between.
    Strict,
    /// Any order after the first step.
    Any,
}

impl FunnelOrder {
    fn as_str(self) -> &'static str {
        match self {
            FunnelOrder::Sequential => "sequential",
            FunnelOrder::Strict => "strict",
            FunnelOrder::Any => "any",
        }
    }
}

/// A funnel to compute.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FunnelRequest {
    /// 2..=10 event names; the first is a custom event, later ones may be internal.
    pub steps: Vec<String>,
    /// Each player's steps must happen within this many seconds of the first (default 7 days).
    #[serde(default = "default_window")]
    pub window_seconds: i64,
    /// First-step events at or after this time (default: 30 days before `to`).
    #[serde(default)]
    pub from: Option<DateTime<Utc>>,
    /// First-step events before this time (default: now).
    #[serde(default)]
    pub to: Option<DateTime<Utc>>,
    /// `sequential` (default), `strict` or `any`.
    #[serde(default)]
    pub order: FunnelOrder,
}

fn default_window() -> i64 {
    DEFAULT_WINDOW_SECONDS
}

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
}

/// The computed funnel.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FunnelResult {
    /// One entry per requested step, in order.
    pub steps: Vec<FunnelStep>,
}

/// The routes of this resource.
pub fn router() -> Router<AppState> {
    Router::new().route("/api/v1/funnels", post(compute_funnel))
}

struct Validated {
    steps: Vec<String>,
    window_seconds: i64,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    order: FunnelOrder,
}

fn validate(request: FunnelRequest, now: DateTime<Utc>) -> Result<Validated, ApiError> {
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
    for (index, step) in request.steps.iter().enumerate().skip(1) {
        if !is_well_formed(step) {
            errors.push(
                &format!("steps[{index}]"),
                "invalid_event_name",
                "event names match ^[a-z0-9_]{1,64}$",
            );
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
    let from = request
        .from
        .unwrap_or(to - Duration::days(DEFAULT_RANGE_DAYS));
    if from >= to {
        errors.push("from", "out_of_range", "from must be before to");
    }
    errors.into_result().map_err(ApiError::invalid)?;
    Ok(Validated {
        steps: request.steps,
        window_seconds: request.window_seconds,
        from,
        to,
        order: request.order,
    })
}

/// Players per step: entries are the first step's events in `[from, to)`.
const FUNNEL_SQL: &str = "
WITH entrants AS (
    SELECT DISTINCT player_uuid FROM events
    WHERE account_id = $1 AND name = $2[1] AND occurred_at >= $3 AND occurred_at < $4
      AND player_uuid IS NOT NULL
), journeys AS (
    SELECT funnel_progress(
               array_agg(coalesce(array_position($2, e.name), 0) ORDER BY e.occurred_at, e.seq),
               array_agg(e.occurred_at ORDER BY e.occurred_at, e.seq),
               $2, $5, $6, $3, $4) AS reached
    FROM events e JOIN entrants USING (player_uuid)
    WHERE e.account_id = $1 AND e.occurred_at >= $3
      AND e.occurred_at <= $4 + make_interval(secs => $5)
      AND (e.name = ANY($2) OR ($6 = 'strict' AND NOT e.is_internal))
    GROUP BY e.player_uuid
)
SELECT k::int8 AS step,
       count(*) FILTER (WHERE cardinality(reached) >= k) AS players,
       percentile_cont(0.5) WITHIN GROUP (
           ORDER BY extract(epoch FROM reached[k] - reached[k - 1])::float8
       ) FILTER (WHERE k > 1 AND cardinality(reached) >= k) AS median_seconds
FROM journeys CROSS JOIN generate_series(1, cardinality($2)) AS k
GROUP BY k ORDER BY k";

/// Compute a funnel over the account's events.
#[utoipa::path(post, path = "/api/v1/funnels", tag = "events",
    security(("dashboard_key" = [])),
    request_body = FunnelRequest,
    responses(
        (status = 200, description = "Players and conversion per step", body = FunnelResult),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not a dashboard key", body = Problem),
        (status = 422, description = "Invalid steps, window or range", body = Problem),
    ))]
pub async fn compute_funnel(
    DashboardCaller(caller): DashboardCaller,
    State(state): State<AppState>,
    ApiJson(request): ApiJson<FunnelRequest>,
) -> Result<Json<FunnelResult>, ApiError> {
    let funnel = validate(request, Utc::now())?;
    let rows: Vec<(i64, i64, Option<f64>)> = sqlx::query_as(FUNNEL_SQL)
        .bind(caller.account_id)
        .bind(&funnel.steps)
        .bind(funnel.from)
        .bind(funnel.to)
        .bind(funnel.window_seconds as f64)
        .bind(funnel.order.as_str())
        .fetch_all(&state.reads)
        .await?;
    Ok(Json(FunnelResult {
        steps: summarize(&funnel.steps, &rows),
    }))
}

/// Turns per-step counts (absent when nobody entered) into the response.
fn summarize(steps: &[String], rows: &[(i64, i64, Option<f64>)]) -> Vec<FunnelStep> {
    let players = |k: usize| rows.iter().find(|r| r.0 == k as i64 + 1).map_or(0, |r| r.1);
    let ratio = |a: i64, b: i64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    let start = players(0);
    steps
        .iter()
        .enumerate()
        .map(|(k, name)| FunnelStep {
            name: name.clone(),
            players: players(k),
            conversion_from_start: ratio(players(k), start),
            conversion_from_previous: if k == 0 {
                ratio(start, start)
            } else {
                ratio(players(k), players(k - 1))
            },
            median_seconds_from_previous: rows
                .iter()
                .find(|r| r.0 == k as i64 + 1)
                .and_then(|r| r.2),
        })
        .collect()
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
        let Ok(funnel) = validate(request(&["a", "b"]), now) else {
            panic!("a two-step funnel is valid");
        };
        assert_eq!(funnel.to, now);
        assert_eq!(funnel.from, now - Duration::days(30));
        assert_eq!(funnel.window_seconds, 604_800);
    }

    #[test]
    fn conversions_are_ratios_of_players() {
        let steps = vec!["a".to_owned(), "b".to_owned(), "c".to_owned()];
        let summary = summarize(
            &steps,
            &[(1, 4, None), (2, 2, Some(30.0)), (3, 1, Some(5.0))],
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
}
