//! `GET /api/punishments`: the whole account's punishment log, newest first, filtered.

use super::params::{self, ListParams, PlayerRef};
use crate::auth::DashboardCaller;
use crate::error::ApiError;
use crate::routes::history::{HistoryCursor, PageRequest};
use crate::routes::punishments::{IS_ACTIVE, JOINS, PunishmentItem, columns};
use crate::state::AppState;
use axum::Json;
use axum::extract::{RawQuery, State};
use chrono::{DateTime, Utc};
use serde::Serialize;
use shared::problem::Problem;
use shared::validation::FieldErrors;
use sqlx::{PgPool, Postgres, QueryBuilder};
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

/// The punishment types a filter may ask for.
pub const TYPES: [&str; 4] = ["ban", "mute", "kick", "warning"];

/// What the account's punishment log is filtered by: every field narrows it, none is required.
/// `GET /api/punishments` and the Punishments page both read through [`read_page`].
#[derive(Debug, Default, Clone)]
pub struct PunishmentFilter {
    /// One of [`TYPES`].
    pub kind: Option<String>,
    /// Issued to this player.
    pub player: Option<PlayerRef>,
    /// Issued by this staff member (a name also matches the issuer name the plugin reported).
    pub staff: Option<PlayerRef>,
    /// Issued on this server.
    pub server: Option<Uuid>,
    /// In force now (true) or not (false).
    pub active: Option<bool>,
    /// Issued at or after.
    pub from: Option<DateTime<Utc>>,
    /// Issued before.
    pub to: Option<DateTime<Utc>>,
}

fn parse(query: Option<&str>) -> Result<(PageRequest, PunishmentFilter), ApiError> {
    let mut errors = FieldErrors::new();
    let list = ListParams::parse(query, &mut errors)?;
    let mut filter = PunishmentFilter {
        from: list.from,
        to: list.to,
        ..PunishmentFilter::default()
    };
    for (key, value) in &list.rest {
        match key.as_str() {
            "type" if TYPES.contains(&value.as_str()) => filter.kind = Some(value.clone()),
            "type" => errors.push("type", "invalid_type", "must be ban, mute, kick or warning"),
            "player_uuid" => {
                filter.player = params::uuid(&mut errors, key, value).map(PlayerRef::Uuid);
            }
            "staff_uuid" => {
                filter.staff = params::uuid(&mut errors, key, value).map(PlayerRef::Uuid);
            }
            "server_id" => filter.server = params::uuid(&mut errors, key, value),
            "active" => filter.active = params::boolean(&mut errors, key, value),
            _ => {}
        }
    }
    errors.into_result().map_err(ApiError::invalid)?;
    Ok((list.page, filter))
}

/// One page of the account's punishments that match `filter`, newest first.
pub async fn read_page(
    pool: &PgPool,
    account_id: Uuid,
    filter: &PunishmentFilter,
    page: &PageRequest,
) -> Result<AccountPunishmentPage, sqlx::Error> {
    let mut sql = QueryBuilder::<Postgres>::new(format!(
        "SELECT p.player_uuid, target.username AS player_username, {} \
         FROM punishments p {JOINS} \
         LEFT JOIN players target ON target.account_id = p.account_id \
           AND target.uuid = p.player_uuid \
         WHERE p.account_id = ",
        columns()
    ));
    sql.push_bind(account_id);
    if let Some(kind) = &filter.kind {
        sql.push(" AND p.type = ").push_bind(kind.clone());
    }
    if let Some(player) = &filter.player {
        player.push_match(&mut sql, account_id, "p.player_uuid", None);
    }
    if let Some(staff) = &filter.staff {
        staff.push_match(
            &mut sql,
            account_id,
            "p.staff_uuid",
            Some("COALESCE(p.staff_name, staff.username)"),
        );
    }
    if let Some(server) = filter.server {
        sql.push(" AND p.server_id = ").push_bind(server);
    }
    match filter.active {
        Some(true) => sql.push(format!(" AND {IS_ACTIVE}")),
        Some(false) => sql.push(format!(" AND NOT {IS_ACTIVE}")),
        None => &mut sql,
    };
    params::push_range(&mut sql, "p.issued_at", filter.from, filter.to);
    page.push_keyset(&mut sql, "p.issued_at", "p.id");
    let rows = sql
        .build_query_as::<AccountPunishment>()
        .fetch_all(pool)
        .await?;
    let (items, next_cursor) = page.finish(rows, |p| HistoryCursor {
        at: p.punishment.issued_at,
        key: p.punishment.id,
    });
    Ok(AccountPunishmentPage { items, next_cursor })
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
    let (page, filter) = parse(query.as_deref())?;
    let page = read_page(&state.reads, caller.account_id, &filter, &page).await?;
    Ok(Json(page))
}
