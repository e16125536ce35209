//! `/players`: search the account's players by any name they have or had, or by UUID
//! (`?q=`, a plain GET form that works without JavaScript), and, without a search, who is
//! online now and who was seen most recently. The data is [`search_players`] (the JSON API's
//! own query) and [`online_now`].

use crate::pages::display;
use crate::pages::error::PageError;
use crate::pages::gate::{PageRoutes, SignedIn};
use crate::pages::{Shell, params, render};
use crate::queries::player_search::{PlayerMatch, PlayerQuery, PlayerSearch, search_players};
use crate::queries::players_online::{OnlinePlayer, online_now};
use crate::routes::admin_settings::AccountSettings;
use crate::state::AppState;
use askama::Template;
use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::get;
use chrono::{DateTime, Utc};

pub(super) const PATH: &str = "/players";
/// Rows in each list: a page to scan by eye, not to page through (refine the search).
const ROWS: i64 = 50;
/// Players listed under "Online now".
const ONLINE_ROWS: i64 = 100;

/// The players page.
#[derive(Template)]
#[template(path = "players.html")]
struct PlayersPage {
    shell: Shell,
    /// The search text as typed (shown back in the field).
    q: String,
    /// Why the search text was refused, if it was.
    refused: Option<String>,
    /// The matches of a valid search (None without one).
    results: Option<Vec<PlayerMatch>>,
    /// More matches than shown.
    more: bool,
    online: Vec<OnlinePlayer>,
    online_total: i64,
    /// More players online than listed.
    online_more: bool,
    recent: Vec<PlayerMatch>,
}

impl PlayersPage {
    fn when(&self, at: &DateTime<Utc>) -> String {
        display::date_time(at)
    }

    fn iso(&self, at: &DateTime<Utc>) -> String {
        display::iso(at)
    }
}

/// `/players`.
pub fn router() -> PageRoutes {
    Router::new().route(PATH, get(players))
}

async fn players(
    caller: SignedIn,
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Response, PageError> {
    let shell = Shell::for_page(&caller, PATH)?;
    let account_id = caller.member().account_id;
    let offline_after = AccountSettings::load(&state.reads, account_id)
        .await?
        .offline_after_seconds();
    let q = params::value(query.as_deref(), "q").unwrap_or_default();
    let mut page = PlayersPage {
        shell,
        q: q.trim().to_owned(),
        refused: None,
        results: None,
        more: false,
        online: Vec::new(),
        online_total: 0,
        online_more: false,
        recent: Vec::new(),
    };
    let list = |search| PlayerQuery {
        account_id,
        offline_after,
        search,
        online: None,
        from: None,
        to: None,
        after: None,
        limit: ROWS,
    };
    if page.q.is_empty() {
        (page.online, page.online_total) =
            online_now(&state.reads, account_id, offline_after, ONLINE_ROWS).await?;
        page.online_more = page.online_total > i64::try_from(page.online.len()).unwrap_or(0);
        page.recent = search_players(&state.reads, &list(None)).await?;
        page.recent
            .truncate(usize::try_from(ROWS).unwrap_or(usize::MAX));
    } else {
        match PlayerSearch::parse(&page.q) {
            Ok(search) => {
                let mut rows = search_players(&state.reads, &list(Some(&search))).await?;
                page.more = rows.len() > usize::try_from(ROWS).unwrap_or(usize::MAX);
                rows.truncate(usize::try_from(ROWS).unwrap_or(usize::MAX));
                page.results = Some(rows);
            }
            Err(refused) => {
                page.refused = Some(format!("The search {}.", refused.message()));
            }
        }
    }
    // A refused search is the page with its message, answered 422 like a bad API query.
    let status = if page.refused.is_some() {
        StatusCode::UNPROCESSABLE_ENTITY
    } else {
        StatusCode::OK
    };
    let mut response = render(&page)?;
    *response.status_mut() = status;
    Ok(response)
}
