//! The player search in the header of every page. `/players/find?q=` is its form (a plain GET,
//! no JavaScript needed): a name, a past name or a UUID matching exactly one of the account's
//! players opens their Investigate page, anything else the Players page's results (which show
//! why a search text is refused). `/players/suggestions?q=` is the list htmx shows under the
//! field as you type. Both run the Players page's own query ([`search_players`]), for the
//! caller's account only, and need what the Players page needs.

use crate::pages::display;
use crate::pages::error::PageError;
use crate::pages::gate::{PageRoutes, SignedIn};
use crate::pages::{Shell, params, render};
use crate::queries::player_search::{
    MIN_SEARCH, PlayerMatch, PlayerQuery, PlayerSearch, search_players,
};
use crate::routes::admin_settings::AccountSettings;
use crate::state::AppState;
use askama::Template;
use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use chrono::{DateTime, Utc};

const FIND: &str = "/players/find";
const SUGGESTIONS: &str = "/players/suggestions";
/// Players suggested under the field: a glance, the Players page has the full list.
const SUGGESTED: i64 = 8;

/// The suggestions under the header's search field.
#[derive(Template)]
#[template(path = "partials/player_suggestions.html")]
struct Suggestions {
    /// The search text, trimmed.
    q: String,
    /// Whether the text was long enough to search.
    searched: bool,
    /// Why the text was refused, if it was.
    refused: Option<String>,
    /// The matches (empty before two characters are typed).
    players: Vec<PlayerMatch>,
    /// More players match than are suggested.
    more: bool,
}

impl Suggestions {
    fn when(&self, at: &DateTime<Utc>) -> String {
        display::date_time(at)
    }

    fn iso(&self, at: &DateTime<Utc>) -> String {
        display::iso(at)
    }

    /// The Players page's results for this text.
    fn results_href(&self) -> String {
        results_path(&self.q)
    }
}

/// `/players/find` and `/players/suggestions`.
pub fn router() -> PageRoutes {
    Router::new()
        .route(FIND, get(find))
        .route(SUGGESTIONS, get(suggestions))
}

/// The Players page's results for `q` (the page itself without one).
fn results_path(q: &str) -> String {
    if q.is_empty() {
        return super::search::PATH.to_owned();
    }
    let query = serde_urlencoded::to_string([("q", q)]).unwrap_or_default();
    format!("{}?{query}", super::search::PATH)
}

/// The caller's players matching `search`: up to `limit + 1` rows, newest seen first.
async fn matches(
    state: &AppState,
    caller: &SignedIn,
    search: &PlayerSearch,
    limit: i64,
) -> Result<Vec<PlayerMatch>, PageError> {
    let account_id = caller.member().account_id;
    let offline_after = AccountSettings::load(&state.reads, account_id)
        .await?
        .offline_after_seconds();
    let query = PlayerQuery {
        account_id,
        offline_after,
        search: Some(search),
        online: None,
        from: None,
        to: None,
        after: None,
        limit,
    };
    Ok(search_players(&state.reads, &query).await?)
}

async fn find(
    caller: SignedIn,
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Response, PageError> {
    Shell::for_page(&caller, super::search::PATH)?;
    let q = params::value(query.as_deref(), "q").unwrap_or_default();
    let q = q.trim();
    // A refused text goes to the Players page, which answers 422 and says why.
    if let Ok(search) = PlayerSearch::parse(q) {
        let found = matches(&state, &caller, &search, 1).await?;
        if let [player] = found.as_slice() {
            return Ok(Redirect::to(&format!("/players/{}", player.uuid)).into_response());
        }
    }
    Ok(Redirect::to(&results_path(q)).into_response())
}

async fn suggestions(
    caller: SignedIn,
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Response, PageError> {
    Shell::for_page(&caller, super::search::PATH)?;
    let q = params::value(query.as_deref(), "q").unwrap_or_default();
    let mut partial = Suggestions {
        q: q.trim().to_owned(),
        searched: false,
        refused: None,
        players: Vec::new(),
        more: false,
    };
    // Under two characters is still typing, not a mistake: nothing to suggest yet.
    let status = if partial.q.chars().count() < MIN_SEARCH {
        StatusCode::OK
    } else {
        match PlayerSearch::parse(&partial.q) {
            Ok(search) => {
                partial.searched = true;
                let mut found = matches(&state, &caller, &search, SUGGESTED).await?;
                partial.more = found.len() > usize::try_from(SUGGESTED).unwrap_or(usize::MAX);
                found.truncate(usize::try_from(SUGGESTED).unwrap_or(usize::MAX));
                partial.players = found;
                StatusCode::OK
            }
            Err(refused) => {
                partial.refused = Some(format!("The search {}.", refused.message()));
                StatusCode::UNPROCESSABLE_ENTITY
            }
        }
    };
    Ok((status, render(&partial)?).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_results_address_carries_the_text_encoded() {
        assert_eq!(results_path(""), "/players");
        assert_eq!(results_path("a&b c"), "/players?q=a%26b+c");
    }
}
