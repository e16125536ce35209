//! `GET /api/servers/{id}/history?range=1h|24h|7d|30d`: a server's TPS and player-count chart
//! with downtime and low-TPS spells (the server page reads the same function).

use crate::auth::{DashboardCaller, DashboardRoutes};
use crate::error::ApiError;
use crate::extract::ApiPath;
use crate::queries::{ChartRange, ServerChart, server_chart};
use crate::state::AppState;
use axum::extract::{RawQuery, State};
use axum::routing::get;
use axum::{Json, Router};
use chrono::Utc;
use shared::problem::Problem;
use uuid::Uuid;

/// The routes of this resource.
pub fn router() -> DashboardRoutes {
    Router::new().route("/api/servers/{id}/history", get(server_history))
}

/// The `range` of the query string (default `24h`); anything else is 422.
pub fn parse_range(query: Option<&str>) -> Result<ChartRange, ApiError> {
    let invalid =
        || ApiError::invalid_field("range", "invalid_range", "must be one of 1h, 24h, 7d, 30d");
    let pairs: Vec<(String, String)> =
        serde_urlencoded::from_str(query.unwrap_or("")).map_err(|_| invalid())?;
    let mut range = ChartRange::default();
    for (key, value) in pairs {
        if key == "range" {
            range = ChartRange::parse(&value).ok_or_else(invalid)?;
        }
    }
    Ok(range)
}

/// A server's TPS and players over 1 h, 24 h (1-minute buckets), 7 d (15-minute) or 30 d
/// (2-hour): min, average and max per bucket, every bucket present (empty ones have
/// `samples` 0), with downtime periods and spells of average TPS below 18 for 3 minutes or
/// more.
#[utoipa::path(get, path = "/api/servers/{id}/history", tag = "players",
    security(("dashboard_key" = [])),
    params(
        ("id" = Uuid, Path, description = "The server's UUID"),
        ("range" = Option<String>, Query, description = "1h, 24h (default), 7d or 30d; anything else is 422"),
    ),
    responses(
        (status = 200, description = "The chart", body = ServerChart),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not a dashboard key", body = Problem),
        (status = 404, description = "The account has no such server", body = Problem),
        (status = 422, description = "range is not one of 1h, 24h, 7d, 30d", body = Problem),
    ))]
pub async fn server_history(
    DashboardCaller(caller): DashboardCaller,
    State(state): State<AppState>,
    ApiPath(server): ApiPath<Uuid>,
    RawQuery(query): RawQuery,
) -> Result<Json<ServerChart>, ApiError> {
    let range = parse_range(query.as_deref())?;
    server_chart(&state.reads, caller.account_id, server, range, Utc::now())
        .await?
        .map(Json)
        .ok_or_else(|| ApiError::NotFound(format!("no server {server} in this account")))
}
