//! `/chat` (admins and owners: [`crate::team::Area::ChatLogs`]): the account's chat lines and
//! commands, newest first, filtered by server, player (UUID or name), channel, chat or
//! command, time range and keyword, read with the query of `GET /api/chat`
//! ([`read_chat`]); `?view=staff_commands` shows the commands run by staff members. Its CSV
//! export (`/chat/export.csv`, [`export`]) streams the same filter, audited.
//!
//! Without JavaScript the page is complete: the form is a GET, older lines are a link. With
//! it, htmx appends older rows (`/chat/rows`). A keyword search can scan a lot, so each read
//! counts against the member's quota ([`super::quota`]).

mod csv;
mod export;
mod form;

pub use export::EXPORT_CHUNK;
pub use form::{ChatForm, PAGE_SIZE, View};

use super::error::PageError;
use super::gate::{PageRoutes, SignedIn};
use super::{Shell, display, quota, render};
use crate::error::ApiError;
use crate::routes::account_reads::chat::{AccountChatEntry, read_chat};
use crate::routes::servers::server_statuses;
use crate::state::AppState;
use askama::Template;
use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use std::collections::HashMap;
use uuid::Uuid;

const PATH: &str = "/chat";

/// One chat line as a row of the table.
#[derive(Debug, Clone)]
pub struct ChatRow {
    /// The line's id.
    pub id: Uuid,
    /// When it was sent, `2025-01-31 12:00:00` (UTC).
    pub sent: String,
    /// The same, in RFC 3339 (`<time datetime>`).
    pub sent_iso: String,
    /// The server's name (or its short id).
    pub server: String,
    /// The sender.
    pub player_uuid: Uuid,
    /// Their latest name.
    pub player_name: Option<String>,
    /// The channel.
    pub channel: Option<String>,
    /// `chat` or `command`.
    pub kind: String,
    /// What they typed (escaped by the template like everything else).
    pub message: String,
}

impl ChatRow {
    fn new(line: AccountChatEntry, servers: &HashMap<Uuid, String>) -> ChatRow {
        let entry = line.entry;
        ChatRow {
            id: entry.id,
            sent: entry.sent_at.format("%Y-%m-%d %H:%M:%S").to_string(),
            sent_iso: display::iso(&entry.sent_at),
            server: server_label(servers, entry.server_id),
            player_uuid: line.player_uuid,
            player_name: line.player_username,
            channel: entry.channel,
            kind: entry.entry_type,
            message: entry.message,
        }
    }
}

/// A server's name as the page and the export show it.
fn server_label(servers: &HashMap<Uuid, String>, id: Uuid) -> String {
    servers
        .get(&id)
        .cloned()
        .unwrap_or_else(|| display::server_name(None, &id))
}

/// The account's servers by id, with the names the page shows.
async fn server_names(
    state: &AppState,
    account_id: Uuid,
) -> Result<Vec<(Uuid, String)>, PageError> {
    Ok(server_statuses(&state.reads, account_id)
        .await?
        .into_iter()
        .map(|s| (s.id, display::server_name(s.name.as_deref(), &s.id)))
        .collect())
}

/// The list under the form.
#[derive(Debug, Clone, Default)]
pub struct Feed {
    /// The form it shows (for its links).
    pub form: ChatForm,
    /// The servers of the form's select: id, name, whether selected.
    pub servers: Vec<(Uuid, String, bool)>,
    /// The rows.
    pub rows: Vec<ChatRow>,
    /// The query of the next (older) page, if any.
    pub older: Option<String>,
    /// When a keyword search stopped at its time budget: how far back it searched.
    pub searched_back_to: Option<String>,
    /// What is wrong with the filters, one line per field.
    pub errors: Vec<String>,
}

/// The Chat logs page.
#[derive(Template)]
#[template(path = "chat.html")]
struct ChatPage {
    shell: Shell,
    feed: Feed,
}

/// Older rows and the next "older" row (htmx appends them to the table).
#[derive(Template)]
#[template(path = "partials/chat_rows.html")]
struct RowsPartial {
    feed: Feed,
}

/// `/chat`, its rows and its export.
pub fn router() -> PageRoutes {
    Router::new()
        .route(PATH, get(page))
        .route("/chat/rows", get(rows_partial))
        .route(export::PATH, get(export::export))
}

/// Reads the list the query asks for; filters the API would refuse are the feed's errors
/// (422), not an error page, so the form stays to correct them.
async fn feed(
    state: &AppState,
    caller: &SignedIn,
    query: Option<String>,
) -> Result<(StatusCode, Feed), PageError> {
    quota::spend(state, caller).await?;
    let account = caller.member().account_id;
    let form = ChatForm::parse(query.as_deref().unwrap_or(""));
    let names = server_names(state, account).await?;
    let servers = names
        .iter()
        .map(|(id, name)| (*id, name.clone(), id.to_string() == form.server))
        .collect();
    let (list, filter) = match form.filter(&state.reads, account).await {
        Ok(parsed) => parsed,
        Err(ApiError::Validation { errors, .. }) => {
            let errors = errors
                .iter()
                .map(|e| format!("{}: {}", e.field, e.message))
                .collect();
            let feed = Feed {
                form,
                servers,
                errors,
                ..Feed::default()
            };
            return Ok((StatusCode::UNPROCESSABLE_ENTITY, feed));
        }
        Err(other) => return Err(other.into()),
    };
    let budget = state.chat_search_budget;
    let page = read_chat(&state.reads, account, &filter, &list, budget).await?;
    let names: HashMap<Uuid, String> = names.into_iter().collect();
    let feed = Feed {
        rows: page
            .items
            .into_iter()
            .map(|line| ChatRow::new(line, &names))
            .collect(),
        older: page.next_cursor.map(|c| form.query_with_cursor(&c)),
        searched_back_to: page
            .searched_back_to
            .map(|at| at.format("%Y-%m-%d %H:%M UTC").to_string()),
        servers,
        errors: Vec::new(),
        form,
    };
    Ok((StatusCode::OK, feed))
}

async fn page(
    caller: SignedIn,
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Response, PageError> {
    let shell = Shell::for_page(&caller, PATH)?;
    let (status, feed) = feed(&state, &caller, query).await?;
    Ok((status, render(&ChatPage { shell, feed })?).into_response())
}

async fn rows_partial(
    caller: SignedIn,
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Response, PageError> {
    Shell::for_page(&caller, PATH)?;
    let (status, feed) = feed(&state, &caller, query).await?;
    Ok((status, render(&RowsPartial { feed })?).into_response())
}
