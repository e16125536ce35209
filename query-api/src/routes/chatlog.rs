//! `GET /api/players/{uuid}/chatlog`: a player's chat messages and commands, newest first.

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
use sqlx::{Postgres, QueryBuilder};
use utoipa::ToSchema;
use uuid::Uuid;

/// One chat message or command.
#[derive(Debug, Serialize, sqlx::FromRow, ToSchema)]
pub struct ChatLogEntry {
    /// The entry's id (its record's event id).
    pub id: Uuid,
    /// `chat` or `command`.
    #[schema(example = "chat")]
    pub entry_type: String,
    /// What the player typed.
    pub message: String,
    /// The chat channel (e.g. "global", "staff").
    pub channel: Option<String>,
    /// The server it was sent on.
    pub server_id: Uuid,
    /// When it was sent (UTC).
    pub sent_at: DateTime<Utc>,
}

/// A page of the chatlog.
#[derive(Debug, Serialize, ToSchema)]
pub struct ChatLogPage {
    /// Newest first (`sent_at`, then `id`, descending).
    pub items: Vec<ChatLogEntry>,
    /// Pass as `cursor` for the next (older) page; null at the end.
    pub next_cursor: Option<String>,
}

/// The columns of a [`ChatLogEntry`] from message `c`.
pub const COLUMNS: &str = "c.id, c.entry_type, c.message, c.channel, c.server_id, c.sent_at";

/// The routes of this resource.
pub fn router() -> DashboardRoutes {
    Router::new().route("/api/players/{uuid}/chatlog", get(chatlog))
}

/// A player's chat messages and commands, newest first.
///
/// Each page is one backwards range of the `(account_id, player_uuid, sent_at DESC, id DESC)`
/// index, however long the player's history.
#[utoipa::path(get, path = "/api/players/{uuid}/chatlog", tag = "players",
    security(("dashboard_key" = [])),
    params(
        ("uuid" = Uuid, Path, description = "The player's UUID"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 500, description = "1..=500, default 50; anything else is 422"),
        ("cursor" = Option<String>, Query, description = "`next_cursor` of the previous page"),
    ),
    responses(
        (status = 200, description = "A page of the chatlog", body = ChatLogPage),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not a dashboard key", body = Problem),
        (status = 404, description = "The account has never seen this player", body = Problem),
        (status = 422, description = "A query parameter is invalid", body = Problem),
    ))]
pub async fn chatlog(
    DashboardCaller(caller): DashboardCaller,
    State(state): State<AppState>,
    ApiPath(player): ApiPath<Uuid>,
    RawQuery(query): RawQuery,
) -> Result<Json<ChatLogPage>, ApiError> {
    let page = PageRequest::parse(query.as_deref().unwrap_or(""))?;
    require_player(&state.reads, caller.account_id, player).await?;
    let mut sql = QueryBuilder::<Postgres>::new(format!(
        "SELECT {COLUMNS} FROM chat_messages c WHERE c.account_id = "
    ));
    sql.push_bind(caller.account_id)
        .push(" AND c.player_uuid = ")
        .push_bind(player);
    page.push_keyset(&mut sql, "c.sent_at", "c.id");
    let rows = sql
        .build_query_as::<ChatLogEntry>()
        .fetch_all(&state.reads)
        .await?;
    let (items, next_cursor) = page.finish(rows, |c| HistoryCursor {
        at: c.sent_at,
        key: c.id,
    });
    Ok(Json(ChatLogPage { items, next_cursor }))
}
