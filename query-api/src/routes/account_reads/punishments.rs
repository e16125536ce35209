//! `GET /api/punishments`: the whole account's punishment log, newest first, filtered.

use super::params::{self, ListParams};
use crate::auth::DashboardCaller;
use crate::error::ApiError;
use crate::routes::history::{HistoryCursor, PageRequest};
use crate::routes::punishments::{IS_ACTIVE, JOINS, PunishmentItem, columns};
use crate::state::AppState;
use axum::Json;
use axum::extract::{RawQuery, State};
use serde::Serialize;
use shared::problem::Problem;
use shared::validation::FieldErrors;
use sqlx::{Postgres, QueryBuilder};
use utoipa::ToSchema;
use uuid::Uuid;

/// One punishment of the account, with the player it was issued to.
#[derive(Debug, Serialize, sqlx::FromRow, ToSchema)]
pub struct AccountPunishment {
    /// The punished player.
    pub player_uuid: Uuid,
    /// Their latest name; null until a record carried one.
    pub player_username: Option<String>,
    /// The punishment, as in a player's history.
    #[serde(flatten)]
    #[sqlx(flatten)]
    pub punishment: PunishmentItem,
}

/// A page of the account's punishments.
#[derive(Debug, Serialize, ToSchema)]
pub struct AccountPunishmentPage {
    /// Newest first (`issued_at`, then `id`, descending).
    pub items: Vec<AccountPunishment>,
    /// Pass as `cursor` for the next (older) page; null at the end.
    pub next_cursor: Option<String>,
}

/// The list's filters.
#[derive(Debug, Default)]
struct Filter {
    kind: Option<String>,
    player: Option<Uuid>,
    staff: Option<Uuid>,
    server: Option<Uuid>,
    active: Option<bool>,
}

fn parse(query: Option<&str>) -> Result<(ListParams, Filter), ApiError> {
    let mut errors = FieldErrors::new();
    let list = ListParams::parse(query, &mut errors)?;
    let mut filter = Filter::default();
    for (key, value) in &list.rest {
        match key.as_str() {
            "type" if ["ban", "mute", "kick", "warning"].contains(&value.as_str()) => {
                filter.kind = Some(value.clone());
            }
            "type" => errors.push("type", "invalid_type", "must be ban, mute, kick or warning"),
            "player_uuid" => filter.player = params::uuid(&mut errors, key, value),
            "staff_uuid" => filter.staff = params::uuid(&mut errors, key, value),
            "server_id" => filter.server = params::uuid(&mut errors, key, value),
            "active" => filter.active = params::boolean(&mut errors, key, value),
            _ => {}
        }
    }
    errors.into_result().map_err(ApiError::invalid)?;
    Ok((list, filter))
}

/// The account's punishments, newest first, with filters.
#[utoipa::path(get, path = "/api/punishments", tag = "players",
    security(("dashboard_key" = [])),
    params(
        ("type" = Option<String>, Query, description = "`ban`, `mute`, `kick` or `warning`"),
        ("player_uuid" = Option<Uuid>, Query, description = "Only those issued to this player"),
        ("staff_uuid" = Option<Uuid>, Query, description = "Only those issued by this staff member"),
        ("server_id" = Option<Uuid>, Query, description = "Only those issued on this server"),
        ("active" = Option<bool>, Query, description = "Only those in force now (true) or not (false)"),
        ("from" = Option<chrono::DateTime<chrono::Utc>>, Query, description = "Issued at or after (RFC 3339)"),
        ("to" = Option<chrono::DateTime<chrono::Utc>>, Query, description = "Issued before (RFC 3339)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 500, description = "1..=500, default 50"),
        ("cursor" = Option<String>, Query, description = "`next_cursor` of the previous page"),
    ),
    responses(
        (status = 200, description = "A page of punishments", body = AccountPunishmentPage),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not a dashboard key", body = Problem),
        (status = 422, description = "A query parameter is invalid", body = Problem),
    ))]
pub async fn list_punishments(
    DashboardCaller(caller): DashboardCaller,
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Json<AccountPunishmentPage>, ApiError> {
    let (list, filter) = parse(query.as_deref())?;
    let mut sql = QueryBuilder::<Postgres>::new(format!(
        "SELECT p.player_uuid, target.username AS player_username, {} \
         FROM punishments p {JOINS} \
         LEFT JOIN players target ON target.account_id = p.account_id \
           AND target.uuid = p.player_uuid \
         WHERE p.account_id = ",
        columns()
    ));
    sql.push_bind(caller.account_id);
    if let Some(kind) = filter.kind {
        sql.push(" AND p.type = ").push_bind(kind);
    }
    if let Some(player) = filter.player {
        sql.push(" AND p.player_uuid = ").push_bind(player);
    }
    if let Some(staff) = filter.staff {
        sql.push(" AND p.staff_uuid = ").push_bind(staff);
    }
    if let Some(server) = filter.server {
        sql.push(" AND p.server_id = ").push_bind(server);
    }
    match filter.active {
        Some(true) => sql.push(format!(" AND {IS_ACTIVE}")),
        Some(false) => sql.push(format!(" AND NOT {IS_ACTIVE}")),
        None => &mut sql,
    };
    list.push_range(&mut sql, "p.issued_at");
    let page: &PageRequest = &list.page;
    page.push_keyset(&mut sql, "p.issued_at", "p.id");
    let rows = sql
        .build_query_as::<AccountPunishment>()
        .fetch_all(&state.reads)
        .await?;
    let (items, next_cursor) = page.finish(rows, |p| HistoryCursor {
        at: p.punishment.issued_at,
        key: p.punishment.id,
    });
    Ok(Json(AccountPunishmentPage { items, next_cursor }))
}
