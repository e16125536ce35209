//! What the pages' live feeds of log records share (the Overview's activity, the Anti-cheat
//! page's flags): Server-Sent Events for the browser's own `EventSource` under its session.
//!
//! - A member holds at most `MAX_STREAMS_PER_KEY` open feeds of any page (the API's per-key
//!   cap, counted per member): 429 past it ([`open_slot`]).
//! - The browser's `Last-Event-ID` (a reconnect) resumes after that position; otherwise the
//!   page's `?after=<log sequence>` starts right after what it showed ([`start`]).
//! - The session is checked every second: when it has ended (sign-out, removal, role or
//!   password change, expiry) the feed says `event: ended` and closes. It also ends at
//!   shutdown, when the browser leaves, and when the log is lost (the browser resumes).
//! - What each log message becomes is the page's ([`FeedRows`]).

use super::error::PageError;
use crate::open_streams::StreamSlot;
use crate::state::AppState;
use crate::team::sessions;
use askama::Template;
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::{Stream, StreamExt};
use shared::envelope::{LogMessage, stream_sequence_of};
use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use uuid::Uuid;

/// How often an open feed checks that its session is still live: the 2 s bound on a removed
/// member's access, with room for the query.
const SESSION_CHECK: Duration = Duration::from_secs(1);
/// Keep-alive comments, as the API's stream.
const KEEP_ALIVE: Duration = Duration::from_secs(15);
/// Events buffered for a slow browser; the log is read at its pace beyond that.
const BUFFER: usize = 64;
/// `Retry-After` when the member holds too many streams.
const TOO_MANY_RETRY_SECS: u64 = 5;

/// Takes one of the member's feed places; 429 when they hold them all. Member ids and key ids
/// are both UUIDs from one generator: sharing the registry gives a member the API's per-key
/// cap. No end is ever announced for a member id.
pub(super) fn open_slot(state: &AppState, member: Uuid) -> Result<StreamSlot, PageError> {
    state
        .streams
        .open(member)
        .map_err(|_| PageError::Throttled(TOO_MANY_RETRY_SECS))
}

/// Where a feed starts: the log sequence to read from (`None`: new records only), and the
/// position at or below which everything was sent before. The browser's `Last-Event-ID` (a
/// reconnect) wins over `after`, the log sequence the page was rendered at.
pub(super) fn start(headers: &HeaderMap, after: Option<&str>) -> (Option<u64>, i64) {
    let resume = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<i64>().ok());
    let after = after.and_then(|a| a.parse::<u64>().ok());
    match (resume, after) {
        (Some(id), _) => (Some(stream_sequence_of(id)), id),
        (None, Some(sequence)) => (Some(sequence.saturating_add(1)), -1),
        (None, None) => (None, -1),
    }
}

/// `partial` as the `kind` event at log position `id`; `None` (logged) when it does not
/// render, which skips that one event.
pub(super) fn rendered(kind: &'static str, id: i64, partial: &impl Template) -> Option<Event> {
    match partial.render() {
        Ok(html) => Some(
            Event::default()
                .event(kind)
                .id(id.to_string())
                .data(html.trim()),
        ),
        Err(error) => {
            tracing::error!(%error, kind, "a live feed's event did not render");
            None
        }
    }
}

/// What one page makes of the log messages of its feed.
pub(super) trait FeedRows: Send + 'static {
    /// Sends the message's events to `out`; false once the browser is gone.
    fn send(
        &mut self,
        sequence: u64,
        message: &LogMessage,
        out: &mpsc::Sender<Event>,
    ) -> impl Future<Output = bool> + Send;
}

/// Answers with the feed: `records` through `rows` to the browser, until the browser leaves,
/// the session ends, the log is lost or the service stops. `name` says which feed in logs.
pub(super) fn respond<S>(
    state: &AppState,
    session: Arc<sessions::Session>,
    slot: StreamSlot,
    records: S,
    rows: impl FeedRows,
    name: &'static str,
) -> Response
where
    S: Stream<Item = anyhow::Result<(u64, LogMessage)>> + Send + 'static,
{
    let (out, feed) = mpsc::channel(BUFFER);
    let feeder = Feeder {
        state: state.clone(),
        session,
        out,
        name,
        _slot: slot,
    };
    tokio::spawn(feeder.run(Box::pin(records), rows));
    Sse::new(ReceiverStream::new(feed).map(Ok::<_, Infallible>))
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
        .into_response()
}

/// One browser's feed.
struct Feeder {
    state: AppState,
    session: Arc<sessions::Session>,
    out: mpsc::Sender<Event>,
    name: &'static str,
    /// Held for the feed's life: the member's count goes down when it ends.
    _slot: StreamSlot,
}

impl Feeder {
    async fn run<S>(self, mut records: std::pin::Pin<Box<S>>, mut rows: impl FeedRows)
    where
        S: Stream<Item = anyhow::Result<(u64, LogMessage)>> + Send,
    {
        let shutdown = self.state.shutdown.clone();
        let mut check = tokio::time::interval(SESSION_CHECK);
        check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return,
                () = self.out.closed() => return,
                _ = check.tick() => {
                    if !self.session_live().await {
                        let ended = Event::default().event("ended").data("session ended");
                        // A browser that reads nothing does not hold the feed open.
                        let _ = tokio::time::timeout(SESSION_CHECK, self.out.send(ended)).await;
                        return;
                    }
                }
                next = records.next() => match next {
                    Some(Ok((sequence, message))) => {
                        if !rows.send(sequence, &message, &self.out).await {
                            return;
                        }
                    }
                    Some(Err(error)) => {
                        tracing::warn!(%error, feed = self.name, "live feed lost the log; the browser resumes");
                        return;
                    }
                    None => return,
                },
            }
        }
    }

    /// False once the session has ended. The database away is not an ending: the next check
    /// decides.
    async fn session_live(&self) -> bool {
        let live = sessions::is_live(
            &self.state.pool,
            &self.session.token_hash,
            &self.state.sessions,
        )
        .await;
        live.unwrap_or_else(|error| {
            tracing::warn!(%error, feed = self.name, "live feed could not check its session");
            true
        })
    }
}
