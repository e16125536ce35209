//! `GET /api/flags`: the whole account's anti-cheat flags, newest first, filtered.

use super::params::{self, ListParams};
use crate::auth::DashboardCaller;
use crate::error::ApiError;
use crate::routes::flags::{COLUMNS, FlagItem};
use crate::routes::history::HistoryCursor;
use crate::state::AppState;
use axum::Json;
use axum::extract::{RawQuery, State};
use serde::Serialize;
use shared::problem::Problem;
use shared::validation::FieldErrors;
use sqlx::{Postgres, QueryBuilder};
use utoipa::ToSchema;
use uuid::Uuid;

/// One flag of the account, with the player it was raised against.
#[derive(Debug, Serialize, sqlx::FromRow, ToSchema)]
pub struct AccountFlag {
    /// The flagged player.
    pub player_uuid: Uuid,
    /// Their latest name; null until a record carried one.
    pub player_username: Option<String>,
    /// The flag, as in a player's history.
    #[serde(flatten)]
    #[sqlx(flatten)]
    pub flag: FlagItem,
}

/// A page of the account's flags.
#[derive(Debug, Serialize, ToSchema)]
pub struct AccountFlagPage {
    /// Newest first (`flagged_at`, then `id`, descending).
    pub items: Vec<AccountFlag>,
    /// Pass as `cursor` for the next (older) page; null at the end.
    pub next_cursor: Option<String>,
}

/// The list's filters.
#[derive(Debug, Default)]
struct Filter {
    check_name: Option<String>,
    player: Option<Uuid>,
    server: Option<Uuid>,
    min_vl: Option<f64>,
}

fn parse(query: Option<&str>) -> Result<(ListParams, Filter), ApiError> {
    let mut errors = FieldErrors::new();
    let list = ListParams::parse(query, &mut errors)?;
    let mut filter = Filter::default();
    for (key, value) in &list.rest {
        match key.as_str() {
            "check_name" => filter.check_name = params::text(&mut errors, key, value),
            "player_uuid" => filter.player = params::uuid(&mut errors, key, value),
            "server_id" => filter.server = params::uuid(&mut errors, key, value),
            "min_vl" => match value.parse::<f64>() {
                Ok(vl) if vl.is_finite() => filter.min_vl = Some(vl),
                _ => errors.push("min_vl", "invalid_number", "must be a finite number"),
            },
            _ => {}
        }
    }
    errors.into_result().map_err(ApiError::invalid)?;
    Ok((list, filter))
}

/// The account's anti-cheat flags, newest first, with filters.
#[utoipa::path(get, path = "/api/flags", tag = "players",
    security(("dashboard_key" = [])),
    params(
        ("check_name" = Option<String>, Query, min_length = 1, max_length = 100, pattern = "^[^\\x00]*$", description = "Only this check (case-insensitive, exact; 1..=100 characters)"),
        ("player_uuid" = Option<Uuid>, Query, description = "Only flags of this player"),
        ("server_id" = Option<Uuid>, Query, description = "Only flags raised on this server"),
        ("min_vl" = Option<f64>, Query, description = "Only flags with at least this violation level"),
        ("from" = Option<chrono::DateTime<chrono::Utc>>, Query, description = "Raised at or after (RFC 3339)"),
        ("to" = Option<chrono::DateTime<chrono::Utc>>, Query, description = "Raised before (RFC 3339)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 500, description = "1..=500, default 50"),
        ("cursor" = Option<String>, Query, description = "`next_cursor` of the previous page"),
    ),
    responses(
        (status = 200, description = "A page of flags", body = AccountFlagPage),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not a dashboard key", body = Problem),
        (status = 422, description = "A query parameter is invalid", body = Problem),
    ))]
pub async fn list_flags(
    DashboardCaller(caller): DashboardCaller,
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Json<AccountFlagPage>, ApiError> {
    let (list, filter) = parse(query.as_deref())?;
    let mut sql = QueryBuilder::<Postgres>::new(format!(
        "SELECT f.player_uuid, target.username AS player_username, {COLUMNS} \
         FROM anticheat_flags f \
         LEFT JOIN players target ON target.account_id = f.account_id \
           AND target.uuid = f.player_uuid \
         WHERE f.account_id = "
    ));
    sql.push_bind(caller.account_id);
    if let Some(check) = filter.check_name {
        sql.push(" AND lower(f.check_name) = lower(")
            .push_bind(check)
            .push(")");
    }
    if let Some(player) = filter.player {
        sql.push(" AND f.player_uuid = ").push_bind(player);
    }
    if let Some(server) = filter.server {
        sql.push(" AND f.server_id = ").push_bind(server);
    }
    if let Some(min_vl) = filter.min_vl {
        sql.push(" AND f.violation_level >= ").push_bind(min_vl);
    }
    list.push_range(&mut sql, "f.flagged_at");
    list.page.push_keyset(&mut sql, "f.flagged_at", "f.id");
    let rows = sql
        .build_query_as::<AccountFlag>()
        .fetch_all(&state.reads)
        .await?;
    let (items, next_cursor) = list.page.finish(rows, |f| HistoryCursor {
        at: f.flag.flagged_at,
        key: f.flag.id,
    });
    Ok(Json(AccountFlagPage { items, next_cursor }))
}
