//! `GET /api/chat`: the whole account's chat messages and commands, newest first, filtered,
//! with a keyword search (`?q=`, case-insensitive substring, served by a trigram index, within
//! a time budget: [`super::keyword_search`]).

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
use sqlx::{PgPool, Postgres, QueryBuilder};
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
    /// Set when a keyword search stopped at its time budget before the end of its range:
    /// lines sent before this time were not searched yet, and `next_cursor` continues from
    /// here. The page may then hold fewer lines than `limit`, or none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub searched_back_to: Option<chrono::DateTime<chrono::Utc>>,
}

/// What a chat list is filtered by: the API's query parameters, the `/chat` page's form and
/// its CSV export all become one of these, read by [`select_chat`].
#[derive(Debug, Clone, Default)]
pub struct ChatFilter {
    /// Only lines of these players (`None`: anyone; an empty list matches nothing).
    pub players: Option<Vec<Uuid>>,
    /// Only lines sent on this server.
    pub server: Option<Uuid>,
    /// Only this channel (exact).
    pub channel: Option<String>,
    /// `chat` or `command`.
    pub entry_type: Option<String>,
    /// Only lines containing this text (case-insensitive).
    pub keyword: Option<String>,
}

/// Reads the API's query string: the filter, the time range and the page.
fn parse(query: Option<&str>) -> Result<(ListParams, ChatFilter), ApiError> {
    let mut errors = FieldErrors::new();
    let list = ListParams::parse(query, &mut errors)?;
    let mut filter = ChatFilter::default();
    for (key, value) in &list.rest {
        match key.as_str() {
            "player_uuid" => {
                filter.players = params::uuid(&mut errors, key, value).map(|p| vec![p]);
            }
            "server_id" => filter.server = params::uuid(&mut errors, key, value),
            "channel" => filter.channel = params::text(&mut errors, key, value),
            "entry_type" => filter.entry_type = entry_type(&mut errors, key, value),
            "q" => filter.keyword = params::text(&mut errors, key, value),
            _ => {}
        }
    }
    errors.into_result().map_err(ApiError::invalid)?;
    Ok((list, filter))
}

/// `chat` or `command`, or an `invalid_type` error.
pub fn entry_type(errors: &mut FieldErrors, field: &str, value: &str) -> Option<String> {
    if value == "chat" || value == "command" {
        Some(value.to_owned())
    } else {
        errors.push(field, "invalid_type", "must be chat or command");
        None
    }
}

/// `SELECT` of the account's chat lines matching `filter` and the time range of `list`, up to
/// its `WHERE` clause: the caller appends the keyset and order
/// ([`crate::routes::paging::PageRequest::push_keyset`]). One copy of the SQL for the API,
/// the `/chat` page and its CSV export.
pub fn select_chat(
    account_id: Uuid,
    filter: &ChatFilter,
    list: &ListParams,
) -> QueryBuilder<'static, Postgres> {
    let mut sql = QueryBuilder::<Postgres>::new(format!(
        "SELECT c.player_uuid, sender.username AS player_username, {COLUMNS} \
         FROM chat_messages c \
         LEFT JOIN players sender ON sender.account_id = c.account_id \
           AND sender.uuid = c.player_uuid \
         WHERE c.account_id = "
    ));
    sql.push_bind(account_id);
    match filter.players.as_deref() {
        None => {}
        // One player stays an equality, which the (account, player, time) index serves in order.
        Some([player]) => {
            sql.push(" AND c.player_uuid = ").push_bind(*player);
        }
        Some(players) => {
            sql.push(" AND c.player_uuid = ANY(")
                .push_bind(players.to_vec())
                .push(")");
        }
    }
    if let Some(server) = filter.server {
        sql.push(" AND c.server_id = ").push_bind(server);
    }
    if let Some(channel) = &filter.channel {
        sql.push(" AND c.channel = ").push_bind(channel.clone());
    }
    if let Some(entry_type) = &filter.entry_type {
        sql.push(" AND c.entry_type = ")
            .push_bind(entry_type.clone());
    }
    if let Some(keyword) = &filter.keyword {
        // ILIKE on the raw column is what the trigram index (gin_trgm_ops) serves.
        sql.push(" AND c.message ILIKE ")
            .push_bind(format!("%{}%", like_literal(keyword)));
    }
    list.push_range(&mut sql, "c.sent_at");
    sql
}

/// One page of the account's chat, newest first (the API's list and the `/chat` page). A
/// keyword search over the whole account runs within `budget`
/// ([`super::keyword_search`]).
pub async fn read_chat(
    reads: &PgPool,
    account_id: Uuid,
    filter: &ChatFilter,
    list: &ListParams,
    budget: std::time::Duration,
) -> Result<AccountChatPage, sqlx::Error> {
    if filter.keyword.is_some() && filter.players.is_none() {
        return super::keyword_search::search_chat(reads, account_id, filter, list, budget).await;
    }
    let mut sql = select_chat(account_id, filter, list);
    list.page.push_keyset(&mut sql, "c.sent_at", "c.id");
    let rows = sql
        .build_query_as::<AccountChatEntry>()
        .fetch_all(reads)
        .await?;
    let (items, next_cursor) = list.page.finish(rows, |c| c.position());
    Ok(AccountChatPage {
        items,
        next_cursor,
        searched_back_to: None,
    })
}

impl AccountChatEntry {
    /// Where this line sits in the newest-first order (a page or an export chunk ends here).
    pub fn position(&self) -> HistoryCursor {
        HistoryCursor {
            at: self.entry.sent_at,
            key: self.entry.id,
        }
    }
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
    let budget = state.chat_search_budget;
    let page = read_chat(&state.reads, caller.account_id, &filter, &list, budget).await?;
    Ok(Json(page))
}
