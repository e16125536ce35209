//! `GET /events/stream`: the Events page's live feed, for the browser's own `EventSource` with
//! the session cookie. It is the stream of `GET /api/v1/events/stream`
//! ([`crate::routes::events_stream::open`]): same filters, same `id`s, `Last-Event-ID` resume
//! from the event log, `event: missed` when behind. What differs is the caller:
//!
//! - the filters come as the page's form sends them ([`super::FilterForm`]), plus `after`, the
//!   seq of the newest event the page showed, so the first connection misses nothing between
//!   the page and the stream (a reconnect's `Last-Event-ID` wins over it);
//! - a member holds at most `MAX_STREAMS_PER_KEY` streams, as a key does (429 page past it);
//! - the member's role decides what they see of each event ([`crate::team::Visibility`]): an
//!   event whose values their role may not see (a chat line below admin, a punishment below
//!   moderator) arrives with `{}` as its properties and `"withheld": true`;
//! - the stream ends when the session does (sign-out, removal, role change, expiry): checked
//!   every [`SESSION_CHECK`], then `event: revoked` and the end.

use super::super::error::PageError;
use super::super::gate::SignedIn;
use super::super::{Shell, quota};
use super::FilterForm;
use crate::open_streams::OpenRefused;
use crate::routes::events_stream::{Ending, last_event_id, open, too_many_streams};
use crate::state::AppState;
use crate::team::sessions;
use axum::extract::{RawQuery, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use std::time::Duration;

/// The stream's path.
pub(super) const PATH: &str = "/events/stream";
/// How often an open stream asks whether its session still lives.
const SESSION_CHECK: Duration = Duration::from_secs(2);
/// The `data` of the last event a stream sends when its session ends.
const SESSION_ENDED: &str =
    r#"{"code":"session_ended","detail":"this stream's session ended: sign in again"}"#;

pub(super) async fn stream(
    caller: SignedIn,
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Result<Response, PageError> {
    Shell::for_page(&caller, super::PATH)?;
    quota::spend(&state, &caller).await?;
    // A member's streams are counted like a key's, under the member's id.
    let slot = match state.streams.open(caller.member().id) {
        Ok(slot) => slot,
        Err(OpenRefused::TooMany { limit }) => return Ok(too_many_streams(limit, "member")),
        // No key has this id: a member's slot never ends that way.
        Err(OpenRefused::KeyEnded) => return Err(PageError::NotFound),
    };
    let form = FilterForm::parse(query.as_deref().unwrap_or(""));
    let mut filter = form.filter()?;
    filter.cursor = None;
    let resume = match last_event_id(&headers)? {
        Some(seq) => Some(seq),
        None => form.after()?,
    };
    let ended = session_ends(state.clone(), caller.session.token_hash.clone());
    let ending = Ending {
        slot,
        ended,
        data: SESSION_ENDED,
    };
    let reader = (caller.member().account_id, caller.visibility());
    Ok(open(&state, reader, filter, resume, ending).into_response())
}

/// Resolves once the session is over. A failed check (the database away) is not an ending: the
/// next one decides.
async fn session_ends(state: AppState, token_hash: String) {
    let mut every = tokio::time::interval(SESSION_CHECK);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    every.tick().await;
    loop {
        every.tick().await;
        if let Ok(false) = sessions::is_live(&state.pool, &token_hash, &state.sessions).await {
            return;
        }
    }
}
