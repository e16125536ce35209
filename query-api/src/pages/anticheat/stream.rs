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
//! - It ends when the session does (`event: ended`), at shutdown and when the browser leaves,
//!   and is capped per member, as every live feed of the pages ([`crate::pages::live_feed`]).

use super::{FlagForm, FlagRow, FlagRowPartial};
use crate::error::ApiError;
use crate::pages::error::PageError;
use crate::pages::gate::SignedIn;
use crate::pages::live_feed::{self, FeedRows};
use crate::pages::{Shell, log_form};
use crate::routes::account_reads::flags::FlagFilter;
use crate::routes::account_reads::params::{PlayerRef, players_named};
use crate::routes::servers::{ServerStatus, server_statuses};
use crate::state::AppState;
use axum::extract::{RawQuery, State};
use axum::http::HeaderMap;
use axum::response::Response;
use axum::response::sse::Event;
use shared::envelope::{LogMessage, RecordBatch, event_seq};
use shared::records::RecordKind;
use std::collections::HashSet;
use tokio::sync::mpsc;
use uuid::Uuid;

/// The feed's path.
pub(super) const PATH: &str = "/anticheat/stream";

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
    let slot = live_feed::open_slot(&state, member.id)?;
    let (from_sequence, after_id) = live_feed::start(&headers, form.after.as_deref());
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
    let rows = Feeder {
        state: state.clone(),
        account,
        filter,
        named,
        servers,
        unnamed: HashSet::new(),
        after_id,
    };
    let session = caller.session.clone();
    Ok(live_feed::respond(
        &state,
        session,
        slot,
        records,
        rows,
        "flag feed",
    ))
}

/// One browser's feed: flags in, rendered rows out.
struct Feeder {
    state: AppState,
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
}

impl FeedRows for Feeder {
    /// Sends the message's flags that pass the filter; false once the browser is gone.
    async fn send(
        &mut self,
        sequence: u64,
        message: &LogMessage,
        out: &mpsc::Sender<Event>,
    ) -> bool {
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
            let partial = FlagRowPartial { row: &row };
            if let Some(event) = live_feed::rendered("flag", id, &partial)
                && out.send(event).await.is_err()
            {
                return false;
            }
        }
        true
    }
}

impl Feeder {
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
