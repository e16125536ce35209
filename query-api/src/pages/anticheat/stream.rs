//! `GET /anticheat/stream`: the Anti-cheat page's live feed of flags, as Server-Sent Events for
//! the browser's own `EventSource` (the session cookie; no key).
//!
//! - It reads the account's `anticheat_flag` records from the event log through an ephemeral
//!   ordered JetStream consumer ([`crate::fanout::LiveEvents::records`]): nothing else of the
//!   account leaves NATS for it, and no other account's subject is read.
//! - The page's filters apply ([`FlagFilter::matches`]): a player name is resolved to the
//!   account's players of that name when the feed opens.
//! - Each event is `event: flag`, its `id` the flag's log position, its `data` the table row as
//!   the page draws it (`partials/flag_row.html`, askama-escaped). `Last-Event-ID` resumes
//!   after that position; `?after=<log sequence>` (the page's) starts right after the page.
//! - It ends when the session does (checked every second: `event: ended`, then the end), at
//!   shutdown, and when the browser leaves. A member holds at most `MAX_STREAMS_PER_KEY` open
//!   streams of any page (the API's per-key cap, counted per member): 429 past it.

use super::{FlagForm, FlagRow, FlagRowPartial};
use crate::error::ApiError;
use crate::open_streams::StreamSlot;
use crate::pages::error::PageError;
use crate::pages::gate::SignedIn;
use crate::pages::{Shell, log_form};
use crate::routes::account_reads::flags::FlagFilter;
use crate::routes::account_reads::params::{PlayerRef, players_named};
use crate::routes::servers::{ServerStatus, server_statuses};
use crate::state::AppState;
use crate::team::sessions;
use askama::Template;
use axum::extract::{RawQuery, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::{Stream, StreamExt};
use shared::envelope::{LogMessage, RecordBatch, event_seq, stream_sequence_of};
use shared::records::RecordKind;
use std::collections::HashSet;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

/// The feed's path.
pub(super) const PATH: &str = "/anticheat/stream";
/// How often an open feed checks that its session is still live.
const SESSION_CHECK: Duration = Duration::from_secs(1);
/// Keep-alive comments, as the API's stream.
const KEEP_ALIVE: Duration = Duration::from_secs(15);
/// Rows buffered for a slow browser; the log is read at its pace beyond that.
const BUFFER: usize = 64;
/// `Retry-After` when the member holds too many streams.
const TOO_MANY_RETRY_SECS: u64 = 5;

pub(super) async fn stream(
    caller: SignedIn,
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Result<Response, PageError> {
    Shell::for_page(&caller, super::PATH)?;
    let member = caller.member();
    let form = FlagForm::parse(query.as_deref());
    let (filter, _) = form.filter().map_err(|lines| {
        PageError::Api(ApiError::invalid_field(
            "filters",
            "invalid_filter",
            lines.join("; "),
        ))
    })?;
    // Member ids and key ids are both UUIDs from one generator: sharing the registry gives a
    // member the API's per-key cap.
    let slot = state
        .streams
        .open(member.id)
        .map_err(|_| PageError::Throttled(TOO_MANY_RETRY_SECS))?;
    // The browser's Last-Event-ID (a reconnect) wins over the page's starting point.
    let resume = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<i64>().ok());
    let after = form.after.as_deref().and_then(|a| a.parse::<u64>().ok());
    let (from_sequence, after_id) = match (resume, after) {
        (Some(id), _) => (Some(stream_sequence_of(id)), id),
        (None, Some(sequence)) => (Some(sequence.saturating_add(1)), -1),
        (None, None) => (None, -1),
    };
    let account = member.account_id;
    let named = match &filter.player {
        Some(PlayerRef::Name(name)) => players_named(&state.reads, account, name).await?,
        _ => Vec::new(),
    };
    let records = state
        .live
        .records(account, &[RecordKind::AnticheatFlag], from_sequence)
        .await
        .map_err(|e| PageError::Api(ApiError::Internal(e)))?;
    let servers = server_statuses(&state.reads, account).await?;
    let (out, feed) = mpsc::channel(BUFFER);
    let feeder = Feeder {
        state: state.clone(),
        session: caller.session.clone(),
        account,
        filter,
        named,
        servers,
        unnamed: HashSet::new(),
        after_id,
        out,
        _slot: slot,
    };
    tokio::spawn(feeder.run(Box::pin(records), state.shutdown.clone()));
    Ok(Sse::new(ReceiverStream::new(feed).map(Ok::<_, Infallible>))
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
        .into_response())
}

/// One browser's feed: flags in, rendered rows out, until the browser leaves, the session
/// ends or the service stops.
struct Feeder {
    state: AppState,
    session: Arc<sessions::Session>,
    account: Uuid,
    filter: FlagFilter,
    /// The players a name filter was resolved to.
    named: Vec<Uuid>,
    /// The account's servers, re-read when a flag names one not among them.
    servers: Vec<ServerStatus>,
    /// Servers looked for once and not found (no heartbeat yet): not asked about again.
    unnamed: HashSet<Uuid>,
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
                            tracing::warn!(%error, "flag feed could not check its session");
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
                        tracing::warn!(%error, "flag feed lost the log; the browser resumes");
                        return;
                    }
                    None => return,
                },
            }
        }
    }

    /// Sends the message's flags that pass the filter; false once the browser is gone.
    async fn send(&mut self, sequence: u64, message: &LogMessage) -> bool {
        let RecordBatch::AnticheatFlag(flags) = &message.batch else {
            return true;
        };
        for (index, logged) in flags.iter().enumerate() {
            let id = event_seq(sequence, index);
            let flag = &logged.record;
            let at = flag.flagged_at.unwrap_or(message.received_at);
            if id <= self.after_id || !self.filter.matches(flag, at, &self.named) {
                continue;
            }
            let server = self.server_label(flag.server_id).await;
            let row = FlagRow::logged(logged.id, flag, at, server);
            let html = match (FlagRowPartial { row: &row }).render() {
                Ok(html) => html,
                Err(error) => {
                    tracing::error!(%error, "flag row did not render");
                    continue;
                }
            };
            let event = Event::default()
                .event("flag")
                .id(id.to_string())
                .data(html.trim());
            if self.out.send(event).await.is_err() {
                return false;
            }
        }
        true
    }

    /// The name of `server`, re-reading the list once for a server not seen before.
    async fn server_label(&mut self, server: Uuid) -> String {
        if !self.servers.iter().any(|s| s.id == server)
            && self.unnamed.insert(server)
            && let Ok(list) = server_statuses(&self.state.reads, self.account).await
        {
            self.servers = list;
        }
        log_form::server_label(&self.servers, &server)
    }
}
