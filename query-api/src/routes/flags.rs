//! `GET /api/players/{uuid}/flags`: a player's anti-cheat flags, newest first.

use crate::auth::{DashboardCaller, DashboardRoutes};
use crate::error::ApiError;
use crate::extract::ApiPath;
use crate::routes::history::{HistoryCursor, PageRequest, require_player};
use crate::state::AppState;
use axum::extract::{RawQuery, State};
use axum::routing::get;
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use serde::Serialize;
use shared::problem::Problem;
use sqlx::{PgPool, Postgres, QueryBuilder};
use utoipa::ToSchema;
use uuid::Uuid;

/// One anti-cheat flag raised against the player.
#[derive(Debug, Serialize, sqlx::FromRow, ToSchema)]
pub struct FlagItem {
    /// The flag's id (its record's event id).
    pub id: Uuid,
    /// The check that fired (e.g. "Reach").
    pub check_name: String,
    /// The check's variant (e.g. "A").
    pub check_type: Option<String>,
    /// The violation level the anti-cheat reported.
    pub violation_level: f64,
    /// What the anti-cheat said about it.
    pub detail: Option<String>,
    /// The anti-cheat plugin (e.g. "grim").
    pub source_plugin: Option<String>,
    /// Whether the check is experimental (more false positives).
    pub is_experimental: bool,
    /// The server it was raised on.
    pub server_id: Uuid,
    /// When it was raised (UTC).
    pub flagged_at: DateTime<Utc>,
    /// The player's ping then, in milliseconds.
    pub ping_ms: Option<f64>,
    /// The server's TPS then.
    pub tps: Option<f64>,
}

/// A page of flags.
#[derive(Debug, Serialize, ToSchema)]
pub struct FlagPage {
    /// Newest first (`flagged_at`, then `id`, descending).
    pub items: Vec<FlagItem>,
    /// Pass as `cursor` for the next (older) page; null at the end.
    pub next_cursor: Option<String>,
}

/// The columns of a [`FlagItem`] from flag `f`.
pub const COLUMNS: &str = "f.id, f.check_name, f.check_type, f.violation_level, f.detail, \
    f.source_plugin, f.is_experimental, f.server_id, f.flagged_at, f.ping_ms, f.tps";

/// The routes of this resource.
pub fn router() -> DashboardRoutes {
    Router::new().route("/api/players/{uuid}/flags", get(list_flags))
}

/// A player's flags, newest first, `page.limit + 1` rows from `page.cursor` on.
pub async fn fetch(
    pool: &PgPool,
    account_id: Uuid,
    player: Uuid,
    page: &PageRequest,
) -> Result<Vec<FlagItem>, sqlx::Error> {
    let mut sql = QueryBuilder::<Postgres>::new(format!(
        "SELECT {COLUMNS} FROM anticheat_flags f WHERE f.account_id = "
    ));
    sql.push_bind(account_id)
        .push(" AND f.player_uuid = ")
        .push_bind(player);
    page.push_keyset(&mut sql, "f.flagged_at", "f.id");
    sql.build_query_as::<FlagItem>().fetch_all(pool).await
}

/// List a player's anti-cheat flags, newest first.
#[utoipa::path(get, path = "/api/players/{uuid}/flags", tag = "players",
    security(("dashboard_key" = [])),
    params(
        ("uuid" = Uuid, Path, description = "The player's UUID"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 500, description = "1..=500, default 50"),
        ("cursor" = Option<String>, Query, description = "`next_cursor` of the previous page"),
    ),
    responses(
        (status = 200, description = "A page of flags", body = FlagPage),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not a dashboard key", body = Problem),
        (status = 404, description = "The account has never seen this player", body = Problem),
        (status = 422, description = "A query parameter is invalid", body = Problem),
    ))]
pub async fn list_flags(
    DashboardCaller(caller): DashboardCaller,
    State(state): State<AppState>,
    ApiPath(player): ApiPath<Uuid>,
    RawQuery(query): RawQuery,
) -> Result<Json<FlagPage>, ApiError> {
    let page = PageRequest::parse(query.as_deref().unwrap_or(""))?;
    require_player(&state.reads, caller.account_id, player).await?;
    let rows = fetch(&state.reads, caller.account_id, player, &page).await?;
    let (items, next_cursor) = page.finish(rows, |f| HistoryCursor {
        at: f.flagged_at,
        key: f.id,
    });
    Ok(Json(FlagPage { items, next_cursor }))
}
