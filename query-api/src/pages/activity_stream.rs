//! `GET /overview/activity`: the Overview's activity feed, live, as Server-Sent Events for the
//! browser's own `EventSource` (the session cookie; no key).
//!
//! - Each event is `event: activity`, its `id` the item's timeline position, its `data` the
//!   item's `<li>` as the page renders it (askama-escaped). `Last-Event-ID` resumes after that
//!   position with no gap; `?after=<log sequence>` (the page's own) starts right after what the
//!   page showed.
//! - The member sees only what their role allows ([`super::activity::visible_to`]): the stream
//!   asks the log for those record kinds alone.
//! - It ends when the session does (sign-out, removal, role or password change, expiry): it is
//!   checked every second, and the stream says `event: ended` and closes. It ends at shutdown.
//! - A member holds at most `MAX_STREAMS_PER_KEY` of them (the API's per-key cap, counted per
//!   member): 429 past it.

use super::activity::{
    ActivityItem, ActivityItemPartial, from_log, join_hashes, mark_banned_alts, record_kinds,
    sees_alts, visible_to,
};
use super::error::PageError;
use super::gate::{PageRoutes, SignedIn};
use super::{Shell, display, params};
use crate::error::ApiError;
use crate::open_streams::StreamSlot;
use crate::queries::ActivityKind;
use crate::routes::servers::{ServerStatus, server_statuses};
use crate::state::AppState;
use crate::team::Role;
use crate::team::sessions;
use askama::Template;
use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures::{Stream, StreamExt};
use shared::envelope::{LogMessage, stream_sequence_of};
use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

/// The stream's path.
pub const PATH: &str = "/overview/activity";
/// How often an open stream checks that its session is still live: the 2 s bound on a
/// removed member's access, with room for the query.
const SESSION_CHECK: Duration = Duration::from_secs(1);
/// Keep-alive comments, as the API's stream.
const KEEP_ALIVE: Duration = Duration::from_secs(15);
/// Items buffered for a slow browser; the log is read at its pace beyond that.
const BUFFER: usize = 64;
/// `Retry-After` when the member holds too many streams.
const TOO_MANY_RETRY_SECS: u64 = 5;

/// The routes of the stream.
pub fn router() -> PageRoutes {
    Router::new().route(PATH, get(activity_stream))
}

async fn activity_stream(
    caller: SignedIn,
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Result<Response, PageError> {
    Shell::for_page(&caller, "/")?;
    let member = caller.member();
    // Member ids and key ids are both UUIDs from one generator: sharing the registry gives a
    // member the API's per-key cap. No end is ever announced for a member id.
    let slot = state
        .streams
        .open(member.id)
        .map_err(|_| PageError::Throttled(TOO_MANY_RETRY_SECS))?;
    // The browser's Last-Event-ID (a reconnect) wins over the page's starting point.
    let resume = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<i64>().ok());
    // The log sequence the page was rendered at.
    let after = params::value(query.as_deref(), "after").and_then(|a| a.parse::<u64>().ok());
    let (from_sequence, after_id) = match (resume, after) {
        (Some(id), _) => (Some(stream_sequence_of(id)), id),
        (None, Some(sequence)) => (Some(sequence.saturating_add(1)), -1),
        (None, None) => (None, -1),
    };
    let account = member.account_id;
    let records = state
        .live
        .records(account, &record_kinds(member.role), from_sequence)
        .await
        .map_err(|e| PageError::Api(ApiError::Internal(e)))?;
    let servers = server_names(server_statuses(&state.reads, account).await?);
    let (out, feed) = mpsc::channel(BUFFER);
    let feeder = Feeder {
        state: state.clone(),
        session: caller.session.clone(),
        role: member.role,
        servers,
        after_id,
        out,
        _slot: slot,
    };
    tokio::spawn(feeder.run(Box::pin(records), state.shutdown.clone()));
    Ok(Sse::new(ReceiverStream::new(feed).map(Ok::<_, Infallible>))
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
        .into_response())
}

/// One browser's feed: log records in, rendered items out, until the browser leaves, the
/// session ends or the service stops.
struct Feeder {
    state: AppState,
    session: Arc<sessions::Session>,
    role: Role,
    /// The account's server names, for the items; re-read when an unknown server appears
    /// (`None`: one that has sent no heartbeat yet).
    servers: HashMap<Uuid, Option<String>>,
    /// Positions at or below this were sent before (a resume).
    after_id: i64,
    out: mpsc::Sender<Event>,
    /// Held for the feed's life: the member's count goes down when it ends.
    _slot: StreamSlot,
}

type Records = std::pin::Pin<Box<dyn Stream<Item = anyhow::Result<(u64, LogMessage)>> + Send>>;

impl Feeder {
    async fn run(mut self, mut records: Records, shutdown: CancellationToken) {
        let mut check = tokio::time::interval(SESSION_CHECK);
        check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return,
                () = self.out.closed() => return,
                _ = check.tick() => {
                    let live = sessions::is_live(
                        &self.state.pool, &self.session.token_hash, &self.state.sessions,
                    ).await;
                    match live {
                        Ok(true) => {}
                        Ok(false) => {
                            let ended = Event::default().event("ended").data("session ended");
                            // A browser that reads nothing does not hold the feed open.
                            let _ = tokio::time::timeout(SESSION_CHECK, self.out.send(ended)).await;
                            return;
                        }
                        // The database away is not an ending: the next check decides.
                        Err(error) => {
                            tracing::warn!(%error, "activity stream could not check its session");
                        }
                    }
                }
                next = records.next() => match next {
                    Some(Ok((sequence, message))) => {
                        if !self.send(sequence, &message).await {
                            return;
                        }
                    }
                    Some(Err(error)) => {
                        tracing::warn!(%error, "activity stream lost the log; the browser resumes");
                        return;
                    }
                    None => return,
                },
            }
        }
    }

    /// Sends the message's visible items; false once the browser is gone.
    async fn send(&mut self, sequence: u64, message: &LogMessage) -> bool {
        let (mut ids, mut items) = (Vec::new(), Vec::new());
        for (id, activity) in from_log(sequence, message) {
            if id <= self.after_id || !visible_to(self.role, activity.kind) {
                continue;
            }
            let server_name = match activity.server_id {
                Some(server) => self.server_name(server).await,
                None => None,
            };
            ids.push(id);
            items.push(ActivityItem::new(activity, server_name));
        }
        self.mark(message, &mut items).await;
        for (id, item) in ids.into_iter().zip(items) {
            let html = match (ActivityItemPartial { item: &item }).render() {
                Ok(html) => html,
                Err(error) => {
                    tracing::error!(%error, "activity item did not render");
                    continue;
                }
            };
            let event = Event::default()
                .event("activity")
                .id(id.to_string())
                .data(html.trim());
            if self.out.send(event).await.is_err() {
                return false;
            }
        }
        true
    }

    /// Marks the message's joins whose player has an alt banned now: one query per message
    /// with joins, for members who see alts. Without the database the items go unmarked.
    async fn mark(&self, message: &LogMessage, items: &mut [ActivityItem]) {
        let joins = items.iter().any(|i| i.activity.kind == ActivityKind::Join);
        if !joins || !sees_alts(self.role) {
            return;
        }
        let account = self.session.member.account_id;
        let hashes = join_hashes(message);
        if let Err(error) = mark_banned_alts(&self.state.reads, account, items, &hashes).await {
            tracing::warn!(%error, "activity stream could not look up banned alts");
        }
    }

    /// The name of `server`, re-reading the list once for a server not seen before.
    async fn server_name(&mut self, server: Uuid) -> Option<String> {
        if !self.servers.contains_key(&server) {
            let account = self.session.member.account_id;
            if let Ok(list) = server_statuses(&self.state.reads, account).await {
                self.servers = server_names(list);
            }
            // Still unknown (no heartbeat yet): remember that, rather than ask every time.
            self.servers.entry(server).or_insert(None);
        }
        self.servers.get(&server).cloned().flatten()
    }
}

/// The servers' names as pages write them, by id.
fn server_names(servers: Vec<ServerStatus>) -> HashMap<Uuid, Option<String>> {
    servers
        .into_iter()
        .map(|s| (s.id, Some(display::server_name(s.name.as_deref(), &s.id))))
        .collect()
}
