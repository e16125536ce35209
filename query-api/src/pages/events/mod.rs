//! `/events`: the account's events, newest first, with the filter form, read with the same
//! query as `GET /api/v1/events` ([`crate::routes::events::read_page`]).
//!
//! Without JavaScript the page is complete: the form is a GET, older events are a link. With
//! it, htmx swaps the list for a filter (`/events/feed`, which tells htmx the page's address
//! to push) or appends older rows (`/events/rows`), and `events.js` adds the live feed from
//! `/events/stream` (`stream.rs`) with pause and resume. Every read counts against the
//! member's quota ([`super::quota`]).

mod query;
mod stream;

pub use query::{FilterForm, PAGE_SIZE, as_rfc3339};

use super::error::PageError;
use super::gate::{PageRoutes, SignedIn};
use super::{Shell, quota, render};
use crate::error::ApiError;
use crate::routes::events::{EventItem, read_page};
use crate::state::AppState;
use askama::Template;
use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

const PATH: &str = "/events";

/// One event as a row of the table.
#[derive(Debug, Clone)]
pub struct EventRow {
    /// The event's id.
    pub id: String,
    /// Its place in the log (the live feed resumes after the newest shown).
    pub seq: i64,
    /// Its name.
    pub name: String,
    /// Its player, if any.
    pub player: Option<String>,
    /// Its properties, exactly as sent (`{}` when withheld).
    pub properties: String,
    /// Whether the member's role may not see its properties ([`crate::team::Visibility`]).
    pub withheld: bool,
    /// When it happened, `2025-01-31 12:00:00` (UTC).
    pub occurred: String,
    /// The same, in RFC 3339 (`<time datetime>`).
    pub occurred_iso: String,
}

impl From<EventItem> for EventRow {
    fn from(item: EventItem) -> Self {
        EventRow {
            id: item.id.to_string(),
            seq: item.seq,
            name: item.name,
            player: item.player_uuid.map(|p| p.to_string()),
            properties: item.properties.get().to_owned(),
            withheld: item.withheld,
            occurred: item.occurred_at.format("%Y-%m-%d %H:%M:%S").to_string(),
            occurred_iso: item.occurred_at.to_rfc3339(),
        }
    }
}

/// The list under the form: rows, the link to older ones, the live stream's address.
#[derive(Debug, Clone, Default)]
pub struct Feed {
    /// The form it shows (for its links).
    pub form: FilterForm,
    /// The rows.
    pub rows: Vec<EventRow>,
    /// The query of the next (older) page, if any.
    pub older: Option<String>,
    /// What is wrong with the filters, one line per field.
    pub errors: Vec<String>,
    /// The live stream's address, on the newest page of valid filters only.
    pub stream: Option<String>,
    /// The seq of the newest row: the stream's first resume point.
    pub after: Option<i64>,
}

/// The Events page.
#[derive(Template)]
#[template(path = "events.html")]
struct EventsPage {
    shell: Shell,
    feed: Feed,
}

/// The list alone (a filter applied with htmx).
#[derive(Template)]
#[template(path = "partials/events_feed.html")]
struct FeedPartial {
    feed: Feed,
}

/// Older rows and the next "older" row (htmx appends them to the table).
#[derive(Template)]
#[template(path = "partials/event_rows.html")]
struct RowsPartial {
    feed: Feed,
}

/// `/events`, its partials and its live stream.
pub fn router() -> PageRoutes {
    Router::new()
        .route(PATH, get(page))
        .route("/events/feed", get(feed_partial))
        .route("/events/rows", get(rows_partial))
        .route(stream::PATH, get(stream::stream))
}

/// Reads the list the query asks for; a filter the API would refuse is the feed's errors
/// (422), not an error page, so the form stays to correct it.
async fn feed(
    state: &AppState,
    caller: &SignedIn,
    query: Option<String>,
) -> Result<(StatusCode, Feed), PageError> {
    quota::spend(state, caller).await?;
    let form = FilterForm::parse(query.as_deref().unwrap_or(""));
    let filter = match form.filter() {
        Ok(filter) => filter,
        Err(ApiError::Validation { errors, .. }) => {
            let errors = errors
                .iter()
                .map(|e| format!("{}: {}", field_label(&e.field), e.message))
                .collect();
            let feed = Feed {
                form,
                errors,
                ..Feed::default()
            };
            return Ok((StatusCode::UNPROCESSABLE_ENTITY, feed));
        }
        Err(other) => return Err(other.into()),
    };
    let account = caller.member().account_id;
    let page = read_page(&state.reads, account, &filter, caller.visibility()).await?;
    let rows: Vec<EventRow> = page.items.into_iter().map(EventRow::from).collect();
    // Only the newest page follows live: an older page would have every newer event arrive.
    let newest = form.cursor.is_none();
    let feed = Feed {
        older: page.next_cursor.map(|c| form.query_with_cursor(&c)),
        stream: newest.then(|| format!("{}?{}", stream::PATH, form.query())),
        after: rows.iter().map(|row| row.seq).max(),
        rows,
        errors: Vec::new(),
        form,
    };
    Ok((StatusCode::OK, feed))
}

/// What the page calls each filter field.
fn field_label(field: &str) -> &str {
    match field {
        "name" => "Event names",
        "player_uuid" => "Player UUID",
        "from" => "From",
        "to" => "To",
        "cursor" => "Page",
        other => other,
    }
}

async fn page(
    caller: SignedIn,
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Response, PageError> {
    let shell = Shell::for_page(&caller, PATH)?;
    let (status, feed) = feed(&state, &caller, query).await?;
    Ok((status, render(&EventsPage { shell, feed })?).into_response())
}

async fn feed_partial(
    caller: SignedIn,
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Response, PageError> {
    Shell::for_page(&caller, PATH)?;
    let (status, feed) = feed(&state, &caller, query).await?;
    // The address of the page this list is: htmx puts it in the history, so a reload or a
    // shared link shows the same list.
    let address = format!("{PATH}?{}", feed.form.query());
    let mut response = (status, render(&FeedPartial { feed })?).into_response();
    if let Ok(value) = HeaderValue::from_str(&address) {
        response.headers_mut().insert("hx-push-url", value);
    }
    Ok(response)
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
