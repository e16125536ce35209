//! `GET /api/chat`: the whole account's chat messages and commands, newest first, filtered,
//! with a keyword search (`?q=`, case-insensitive substring, served by a trigram index).

use super::params::{self, ListParams, like_literal};
use crate::auth::DashboardCaller;
use crate::error::ApiError;
use crate::routes::chatlog::{COLUMNS, ChatLogEntry};
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

/// One chat line of the account, with who sent it.
#[derive(Debug, Serialize, sqlx::FromRow, ToSchema)]
pub struct AccountChatEntry {
    /// The sender.
    pub player_uuid: Uuid,
    /// Their latest name; null until a record carried one.
    pub player_username: Option<String>,
    /// The line, as in a player's chatlog.
    #[serde(flatten)]
    #[sqlx(flatten)]
    pub entry: ChatLogEntry,
}

/// A page of the account's chat.
#[derive(Debug, Serialize, ToSchema)]
pub struct AccountChatPage {
    /// Newest first (`sent_at`, then `id`, descending).
    pub items: Vec<AccountChatEntry>,
    /// Pass as `cursor` for the next (older) page; null at the end.
    pub next_cursor: Option<String>,
}

/// The list's filters.
#[derive(Debug, Default)]
struct Filter {
    player: Option<Uuid>,
    server: Option<Uuid>,
    channel: Option<String>,
    entry_type: Option<String>,
    keyword: Option<String>,
}

fn parse(query: Option<&str>) -> Result<(ListParams, Filter), ApiError> {
    let mut errors = FieldErrors::new();
    let list = ListParams::parse(query, &mut errors)?;
    let mut filter = Filter::default();
    for (key, value) in &list.rest {
        match key.as_str() {
            "player_uuid" => filter.player = params::uuid(&mut errors, key, value),
            "server_id" => filter.server = params::uuid(&mut errors, key, value),
            "channel" => filter.channel = params::text(&mut errors, key, value),
            "entry_type" if value == "chat" || value == "command" => {
                filter.entry_type = Some(value.clone());
            }
            "entry_type" => errors.push("entry_type", "invalid_type", "must be chat or command"),
            "q" => filter.keyword = params::text(&mut errors, key, value),
            _ => {}
        }
    }
    errors.into_result().map_err(ApiError::invalid)?;
    Ok((list, filter))
}

/// The account's chat messages and commands, newest first, with filters and a keyword.
#[utoipa::path(get, path = "/api/chat", tag = "players",
    security(("dashboard_key" = [])),
    params(
        ("q" = Option<String>, Query, min_length = 1, max_length = 100, pattern = "^[^\\x00]*$", description = "Only lines containing this text (case-insensitive; 1..=100 characters)"),
        ("player_uuid" = Option<Uuid>, Query, description = "Only lines of this player"),
        ("server_id" = Option<Uuid>, Query, description = "Only lines sent on this server"),
        ("channel" = Option<String>, Query, min_length = 1, max_length = 100, pattern = "^[^\\x00]*$", description = "Only this channel (exact; 1..=100 characters)"),
        ("entry_type" = Option<String>, Query, description = "`chat` or `command`"),
        ("from" = Option<chrono::DateTime<chrono::Utc>>, Query, description = "Sent at or after (RFC 3339)"),
        ("to" = Option<chrono::DateTime<chrono::Utc>>, Query, description = "Sent before (RFC 3339)"),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 500, description = "1..=500, default 50"),
        ("cursor" = Option<String>, Query, description = "`next_cursor` of the previous page"),
    ),
    responses(
        (status = 200, description = "A page of chat", body = AccountChatPage),
        (status = 401, description = "Missing or invalid key", body = Problem),
        (status = 403, description = "Not a dashboard key", body = Problem),
        (status = 422, description = "A query parameter is invalid", body = Problem),
    ))]
pub async fn list_chat(
    DashboardCaller(caller): DashboardCaller,
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Json<AccountChatPage>, ApiError> {
    let (list, filter) = parse(query.as_deref())?;
    let mut sql = QueryBuilder::<Postgres>::new(format!(
        "SELECT c.player_uuid, sender.username AS player_username, {COLUMNS} \
         FROM chat_messages c \
         LEFT JOIN players sender ON sender.account_id = c.account_id \
           AND sender.uuid = c.player_uuid \
         WHERE c.account_id = "
    ));
    sql.push_bind(caller.account_id);
    if let Some(player) = filter.player {
        sql.push(" AND c.player_uuid = ").push_bind(player);
    }
    if let Some(server) = filter.server {
        sql.push(" AND c.server_id = ").push_bind(server);
    }
    if let Some(channel) = filter.channel {
        sql.push(" AND c.channel = ").push_bind(channel);
    }
    if let Some(entry_type) = filter.entry_type {
        sql.push(" AND c.entry_type = ").push_bind(entry_type);
    }
    if let Some(keyword) = filter.keyword {
        // ILIKE on the raw column is what the trigram index (gin_trgm_ops) serves.
        sql.push(" AND c.message ILIKE ")
            .push_bind(format!("%{}%", like_literal(&keyword)));
    }
    list.push_range(&mut sql, "c.sent_at");
    list.page.push_keyset(&mut sql, "c.sent_at", "c.id");
    let rows = sql
        .build_query_as::<AccountChatEntry>()
        .fetch_all(&state.reads)
        .await?;
    let (items, next_cursor) = list.page.finish(rows, |c| HistoryCursor {
        at: c.entry.sent_at,
        key: c.entry.id,
    });
    Ok(Json(AccountChatPage { items, next_cursor }))
}
