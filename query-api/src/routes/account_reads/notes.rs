//! `GET /api/players/{uuid}/notes`: the staff notes about a player and about their
//! punishments, newest first, keyset-paged. Notes are written on the dashboard (the
//! Investigate page's form) and logged like every other record.

use crate::auth::DashboardCaller;
use crate::error::ApiError;
use crate::extract::ApiPath;
use crate::queries::notes::{NotePage, player_notes};
use crate::routes::history::{PageRequest, require_player};
use crate::state::AppState;
use axum::Json;
use axum::extract::{RawQuery, State};
use shared::problem::Problem;
use uuid::Uuid;

/// The staff notes about a player and their punishments, newest first.
#[utoipa::path(get, path = "/api/players/{uuid}/notes", tag = "players",
    security(("dashboard_key" = [])),
    params(
        ("uuid" = Uuid, Path, description = "The player's UUID"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 500, description = "1..=500, default 50"),
        ("cursor" = Option<String>, Query, description = "`next_cursor` of the previous page"),
    ),
    responses(
        (status = 200, description = "A page of notes", body = NotePage),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not a dashboard key", body = Problem),
        (status = 404, description = "The account has never seen this player", body = Problem),
        (status = 422, description = "A query parameter is invalid", body = Problem),
    ))]
pub async fn list_notes(
    DashboardCaller(caller): DashboardCaller,
    State(state): State<AppState>,
    ApiPath(player): ApiPath<Uuid>,
    RawQuery(query): RawQuery,
) -> Result<Json<NotePage>, ApiError> {
    let page = PageRequest::parse(query.as_deref().unwrap_or(""))?;
    require_player(&state.reads, caller.account_id, player).await?;
    let page = player_notes(&state.reads, caller.account_id, player, &page).await?;
    Ok(Json(page))
}
