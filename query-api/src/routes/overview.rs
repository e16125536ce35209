//! `GET /api/overview`: the Overview page's data as JSON (the page reads the same function).

use crate::auth::{DashboardCaller, DashboardRoutes};
use crate::error::ApiError;
use crate::queries::{Overview, overview};
use crate::state::AppState;
use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use chrono::Utc;
use shared::problem::Problem;

/// The routes of this resource.
pub fn router() -> DashboardRoutes {
    Router::new().route("/api/overview", get(get_overview))
}

/// The network at a glance: servers and players online, every server's TPS, the players-online
/// chart of the last 24 hours (5-minute buckets), staff online and the newest activity.
#[utoipa::path(get, path = "/api/overview", tag = "players",
    security(("dashboard_key" = [])),
    responses(
        (status = 200, description = "The Overview", body = Overview),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not a dashboard key", body = Problem),
    ))]
pub async fn get_overview(
    DashboardCaller(caller): DashboardCaller,
    State(state): State<AppState>,
) -> Result<Json<Overview>, ApiError> {
    Ok(Json(
        overview(&state.reads, caller.account_id, Utc::now()).await?,
    ))
}
