//! `GET /api/servers`: the account's servers and their status, ordered by name.

use crate::auth::{DashboardCaller, DashboardRoutes};
use crate::error::ApiError;
use crate::routes::admin_settings::AccountSettings;
use crate::routes::liveness::SERVER_STATUS_CTE;
use crate::state::AppState;
use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use serde::Serialize;
use shared::problem::Problem;
use shared::records::ServerRole;
use utoipa::ToSchema;
use uuid::Uuid;

/// One server and its status as of its last heartbeat.
#[derive(Debug, Serialize, sqlx::FromRow, ToSchema)]
pub struct ServerStatus {
    /// The server's UUID (the plugin's `server_id`).
    pub id: Uuid,
    /// Display name from its heartbeats; null until one carries a name.
    pub name: Option<String>,
    /// `server` (a game server) or `proxy`, as its last heartbeat said. A proxy's players are
    /// also on the servers behind it, so network totals leave proxies out.
    #[sqlx(try_from = "String")]
    pub role: ServerRole,
    /// Online now: its last heartbeat said so and came within 3 × the sync interval.
    pub is_online: bool,
    /// Ticks per second at the last heartbeat.
    pub tps: Option<f64>,
    /// Players online at the last heartbeat (the last reported value, also once offline).
    pub player_count: Option<i32>,
    /// Player slots at the last heartbeat.
    pub max_players: Option<i32>,
    /// Server software version (e.g. "Paper 1.21.4").
    pub version: Option<String>,
    /// When the last heartbeat was sent (UTC).
    pub last_heartbeat_at: DateTime<Utc>,
}

impl ServerStatus {
    /// Whether it is a proxy (pages label it "Proxy").
    pub fn is_proxy(&self) -> bool {
        self.role == ServerRole::Proxy
    }
}

/// The account's servers.
#[derive(Debug, Serialize, ToSchema)]
pub struct ServerList {
    /// Ordered by name (case-insensitive; unnamed servers last), then id.
    pub items: Vec<ServerStatus>,
}

/// The routes of this resource.
pub fn router() -> DashboardRoutes {
    Router::new().route("/api/servers", get(list_servers))
}

/// List the account's servers with their online status and last reported figures.
#[utoipa::path(get, path = "/api/servers", tag = "players",
    security(("dashboard_key" = [])),
    responses(
        (status = 200, description = "Every server that has sent a heartbeat", body = ServerList),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not a dashboard key", body = Problem),
    ))]
pub async fn list_servers(
    DashboardCaller(caller): DashboardCaller,
    State(state): State<AppState>,
) -> Result<Json<ServerList>, ApiError> {
    let items = server_statuses(&state.reads, caller.account_id).await?;
    Ok(Json(ServerList { items }))
}

/// The statement of [`server_statuses`]: `$1` the account, `$2` its offline-after seconds.
pub fn server_statuses_sql() -> String {
    format!(
        "WITH {SERVER_STATUS_CTE} \
         SELECT id, name, role, is_online, tps, player_count, max_players, version, \
                last_heartbeat_at \
         FROM server_status ORDER BY lower(name) NULLS LAST, name, id"
    )
}

/// Every server of the account with its status, ordered by name (the API and the pages).
pub async fn server_statuses(
    reads: &sqlx::PgPool,
    account_id: Uuid,
) -> Result<Vec<ServerStatus>, sqlx::Error> {
    let settings = AccountSettings::load(reads, account_id).await?;
    sqlx::query_as::<_, ServerStatus>(&server_statuses_sql())
        .bind(account_id)
        .bind(settings.offline_after_seconds())
        .fetch_all(reads)
        .await
}
