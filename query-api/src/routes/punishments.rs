//! `GET /api/players/{uuid}/punishments`: a player's complete punishment history, newest first.

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

/// One punishment issued to the player.
#[derive(Debug, Serialize, sqlx::FromRow, ToSchema)]
pub struct PunishmentItem {
    /// The punishment's id (its record's event id).
    pub id: Uuid,
    /// `ban`, `mute`, `kick` or `warning`.
    #[serde(rename = "type")]
    #[schema(example = "ban")]
    pub punishment_type: String,
    /// Why it was issued.
    pub reason: Option<String>,
    /// Who issued it; null for the console.
    pub staff_uuid: Option<Uuid>,
    /// The issuer's name as the plugin reported it (else their latest player name).
    pub staff_username: Option<String>,
    /// The server it was issued on; null for one issued on the dashboard (`source_plugin`
    /// `warden`).
    pub server_id: Option<Uuid>,
    /// That server's name, when it has sent a heartbeat with one.
    pub server_name: Option<String>,
    /// When it was issued (UTC).
    pub issued_at: DateTime<Utc>,
    /// When it ends; null = permanent (always null for kicks).
    pub expires_at: Option<DateTime<Utc>>,
    /// Whether it is in force now: see [`IS_ACTIVE`].
    pub is_active: bool,
    /// When it was revoked; null while not revoked.
    pub revoked_at: Option<DateTime<Utc>>,
    /// Who revoked it (null for the console or while not revoked).
    pub revoked_by: Option<Uuid>,
    /// The revoker's name as the plugin reported it.
    pub revoked_by_username: Option<String>,
    /// Why it was revoked.
    pub revoke_reason: Option<String>,
    /// Server group it applies to, or "global".
    pub scope: Option<String>,
    /// The plugin that reported it (e.g. "litebans"), or `warden` for the dashboard.
    pub source_plugin: Option<String>,
    /// Whether it targets the player's IP.
    pub ip_based: bool,
    /// For a punishment issued on the dashboard: the servers that applied it (their names, else
    /// their ids), from their acknowledgements; empty otherwise.
    pub applied_on: Vec<String>,
}

/// A page of punishments.
#[derive(Debug, Serialize, ToSchema)]
pub struct PunishmentPage {
    /// Newest first (`issued_at`, then `id`, descending).
    pub items: Vec<PunishmentItem>,
    /// Pass as `cursor` for the next (older) page; null at the end.
    pub next_cursor: Option<String>,
}

/// SQL expression: whether punishment `p` is in force now.
///
/// A ban or mute is active while it is not revoked and not expired (`revoked_at IS NULL AND
/// (expires_at IS NULL OR expires_at > now())`). A kick or a warning takes effect once, when
/// issued, and has no duration, so it is never reported active.
pub const IS_ACTIVE: &str = "(p.type IN ('ban', 'mute') AND p.revoked_at IS NULL \
    AND (p.expires_at IS NULL OR p.expires_at > now()))";

/// The columns of a [`PunishmentItem`] from punishment `p` with [`JOINS`].
pub fn columns() -> String {
    format!(
        "p.id, p.type AS punishment_type, p.reason, p.staff_uuid, \
         COALESCE(p.staff_name, staff.username) AS staff_username, p.server_id, \
         s.name AS server_name, p.issued_at, p.expires_at, {IS_ACTIVE} AS is_active, \
         p.revoked_at, p.revoked_by, p.revoked_by_name AS revoked_by_username, \
         p.revoke_reason, p.scope, p.source_plugin, p.ip_based, {APPLIED_ON} AS applied_on"
    )
}

/// SQL expression: the servers that applied punishment `p` (a dashboard action's punishment
/// has the action's id), from `action_deliveries`.
const APPLIED_ON: &str = "ARRAY(SELECT COALESCE(ds.name, d.server_id::text) FROM action_deliveries d \
    LEFT JOIN servers ds ON ds.account_id = d.account_id AND ds.id = d.server_id \
    WHERE d.account_id = p.account_id AND d.action_id = p.id AND d.outcome = 'applied' ORDER BY 1)";

/// The joins [`columns`] reads: the server's name and the issuer's player name.
pub const JOINS: &str = "LEFT JOIN servers s ON s.account_id = p.account_id AND s.id = p.server_id \
    LEFT JOIN players staff ON staff.account_id = p.account_id AND staff.uuid = p.staff_uuid";

/// The routes of this resource.
pub fn router() -> DashboardRoutes {
    Router::new().route("/api/players/{uuid}/punishments", get(list_punishments))
}

/// A player's punishments, newest first, `page.limit + 1` rows from `page.cursor` on.
pub async fn fetch(
    pool: &PgPool,
    account_id: Uuid,
    player: Uuid,
    page: &PageRequest,
) -> Result<Vec<PunishmentItem>, sqlx::Error> {
    let mut sql = QueryBuilder::<Postgres>::new(format!(
        "SELECT {} FROM punishments p {JOINS} WHERE p.account_id = ",
        columns()
    ));
    sql.push_bind(account_id)
        .push(" AND p.player_uuid = ")
        .push_bind(player);
    page.push_keyset(&mut sql, "p.issued_at", "p.id");
    sql.build_query_as::<PunishmentItem>().fetch_all(pool).await
}

/// List a player's punishments, newest first (the complete history, page by page).
#[utoipa::path(get, path = "/api/players/{uuid}/punishments", tag = "players",
    security(("dashboard_key" = [])),
    params(
        ("uuid" = Uuid, Path, description = "The player's UUID"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 500, description = "1..=500, default 50"),
        ("cursor" = Option<String>, Query, description = "`next_cursor` of the previous page"),
    ),
    responses(
        (status = 200, description = "A page of punishments", body = PunishmentPage),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not a dashboard key", body = Problem),
        (status = 404, description = "The account has never seen this player", body = Problem),
        (status = 422, description = "A query parameter is invalid", body = Problem),
    ))]
pub async fn list_punishments(
    DashboardCaller(caller): DashboardCaller,
    State(state): State<AppState>,
    ApiPath(player): ApiPath<Uuid>,
    RawQuery(query): RawQuery,
) -> Result<Json<PunishmentPage>, ApiError> {
    let page = PageRequest::parse(query.as_deref().unwrap_or(""))?;
    require_player(&state.reads, caller.account_id, player).await?;
    let rows = fetch(&state.reads, caller.account_id, player, &page).await?;
    let (items, next_cursor) = page.finish(rows, |p| HistoryCursor {
        at: p.issued_at,
        key: p.id,
    });
    Ok(Json(PunishmentPage { items, next_cursor }))
}
