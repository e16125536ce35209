//! `GET /api/staff/leaderboard?days=7|30`: punishments issued and time online per staff
//! member (the staff page reads the same function).

use crate::auth::{DashboardCaller, DashboardRoutes};
use crate::error::ApiError;
use crate::queries::staff_board::LEADERBOARD_DAYS;
use crate::queries::{LeaderboardEntry, staff_leaderboard};
use crate::state::AppState;
use axum::extract::{RawQuery, State};
use axum::routing::get;
use axum::{Json, Router};
use serde::Serialize;
use shared::problem::Problem;
use utoipa::ToSchema;

/// The leaderboard.
#[derive(Debug, Serialize, ToSchema)]
pub struct Leaderboard {
    /// The window, in days.
    pub days: u32,
    /// Most punishments first, then most time online, then name.
    pub items: Vec<LeaderboardEntry>,
}

/// The routes of this resource.
pub fn router() -> DashboardRoutes {
    Router::new().route("/api/staff/leaderboard", get(leaderboard))
}

/// The `days` of the query string (default 7): 7 or 30, anything else is 422.
pub fn parse_days(query: Option<&str>) -> Result<u32, ApiError> {
    let invalid = || ApiError::invalid_field("days", "invalid_days", "must be 7 or 30");
    let pairs: Vec<(String, String)> =
        serde_urlencoded::from_str(query.unwrap_or("")).map_err(|_| invalid())?;
    let mut days = LEADERBOARD_DAYS[0];
    for (key, value) in pairs {
        if key == "days" {
            days = value
                .parse()
                .ok()
                .filter(|d| LEADERBOARD_DAYS.contains(d))
                .ok_or_else(invalid)?;
        }
    }
    Ok(days)
}

/// Staff ranked by punishments issued, then time online, over the last 7 or 30 days.
#[utoipa::path(get, path = "/api/staff/leaderboard", tag = "players",
    security(("dashboard_key" = [])),
    params(("days" = Option<u32>, Query, description = "7 (default) or 30; anything else is 422")),
    responses(
        (status = 200, description = "The leaderboard", body = Leaderboard),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not a dashboard key", body = Problem),
        (status = 422, description = "days is not 7 or 30", body = Problem),
    ))]
pub async fn leaderboard(
    DashboardCaller(caller): DashboardCaller,
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Json<Leaderboard>, ApiError> {
    let days = parse_days(query.as_deref())?;
    let items = staff_leaderboard(&state.reads, caller.account_id, days).await?;
    Ok(Json(Leaderboard { days, items }))
}
