//! `GET /overview/activity`: the Overview's activity feed, live, as Server-Sent Events for the
//! browser's own `EventSource` (the session cookie; no key).
//!
//! - Each event is `event: activity`, its `id` the item's timeline position, its `data` the
//!   item's `<li>` as the page renders it (askama-escaped). `Last-Event-ID` resumes after that
//!   position with no gap; `?after=<log sequence>` (the page's own) starts right after what the
//!   page showed.
//! - The member sees only what their role allows ([`super::activity::visible_to`]): the stream
//!   asks the log for those record kinds alone.
//! - It ends when the session does (`event: ended`), at shutdown, and is capped per member, as
//!   every live feed of the pages ([`super::live_feed`]).

use super::activity::{
    ActivityItem, ActivityItemPartial, from_log, join_hashes, mark_banned_alts, record_kinds,
    sees_alts, visible_to,
};
use super::error::PageError;
use super::gate::{PageRoutes, SignedIn};
use super::live_feed::{self, FeedRows};
use super::{Shell, display, params};
use crate::error::ApiError;
use crate::queries::ActivityKind;
use crate::routes::servers::{ServerStatus, server_statuses};
use crate::state::AppState;
use crate::team::Role;
use crate::team::sessions;
use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::HeaderMap;
use axum::response::Response;
use axum::response::sse::Event;
use axum::routing::get;
use shared::envelope::LogMessage;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::mpsc;
use uuid::Uuid;

/// The stream's path.
pub const PATH: &str = "/overview/activity";

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
    let slot = live_feed::open_slot(&state, member.id)?;
    let after = params::value(query.as_deref(), "after");
    let (from_sequence, after_id) = live_feed::start(&headers, after.as_deref());
    let account = member.account_id;
    let records = state
        .live
        .records(account, &record_kinds(member.role), from_sequence)
        .await
        .map_err(|e| PageError::Api(ApiError::Internal(e)))?;
    let servers = server_names(server_statuses(&state.reads, account).await?);
    let rows = Feeder {
        state: state.clone(),
        session: caller.session.clone(),
        role: member.role,
        servers,
        after_id,
    };
    let session = caller.session.clone();
    Ok(live_feed::respond(
        &state,
        session,
        slot,
        records,
        rows,
        "activity stream",
    ))
}

/// One browser's feed: log records in, rendered items out.
struct Feeder {
    state: AppState,
    session: Arc<sessions::Session>,
    role: Role,
    /// The account's server names, for the items; re-read when an unknown server appears
    /// (`None`: one that has sent no heartbeat yet).
    servers: HashMap<Uuid, Option<String>>,
    /// Positions at or below this were sent before (a resume).
    after_id: i64,
}

impl FeedRows for Feeder {
    /// Sends the message's visible items; false once the browser is gone.
    async fn send(
        &mut self,
        sequence: u64,
        message: &LogMessage,
        out: &mpsc::Sender<Event>,
    ) -> bool {
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
            let partial = ActivityItemPartial { item: &item };
            if let Some(event) = live_feed::rendered("activity", id, &partial)
                && out.send(event).await.is_err()
            {
                return false;
            }
        }
        true
    }
}

impl Feeder {
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
