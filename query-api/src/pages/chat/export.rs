//! `GET /chat/export.csv?<the page's filters>`: every line of the filter as CSV, newest first,
//! streamed. Admins and owners only (the page's area); every export is recorded in the audit
//! log (who, the filter, when) before the first byte is sent, so an export that fails half-way
//! is still on record.
//!
//! The rows are read in keyset chunks of [`EXPORT_CHUNK`], each chunk one query whose rows are
//! written out as they arrive: memory holds one chunk's text whatever the export's size, a
//! slow download holds no database connection between chunks, and the body only asks for the
//! next chunk when the client has taken the last one.

use super::csv::push_record;
use super::{ChatForm, PATH as PAGE, server_label, server_names};
use crate::pages::Shell;
use crate::pages::error::PageError;
use crate::pages::gate::SignedIn;
use crate::pages::quota;
use crate::routes::account_reads::chat::{AccountChatEntry, ChatFilter, select_chat};
use crate::routes::account_reads::params::ListParams;
use crate::routes::history::{HistoryCursor, PageRequest};
use crate::state::AppState;
use crate::team::audit::{self, AuditEntry};
use axum::body::{Body, Bytes};
use axum::extract::{RawQuery, State};
use axum::http::header::{CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use futures::TryStreamExt;
use sqlx::PgPool;
use std::collections::HashMap;
use uuid::Uuid;

/// Where the export is.
pub(super) const PATH: &str = "/chat/export.csv";

/// Rows per query of an export.
pub const EXPORT_CHUNK: i64 = 1000;

/// The export's columns.
const HEADER: [&str; 9] = [
    "sent_at",
    "server_id",
    "server_name",
    "player_uuid",
    "player_name",
    "entry_type",
    "channel",
    "message",
    "id",
];

pub(super) async fn export(
    caller: SignedIn,
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Response, PageError> {
    Shell::for_page(&caller, PAGE)?;
    quota::spend(&state, &caller).await?;
    let account = caller.member().account_id;
    let form = ChatForm::parse(query.as_deref().unwrap_or(""));
    // A bad filter is the 422 page naming each field, before anything is recorded or sent.
    let (list, filter) = form.filter(&state.reads, account).await?;
    let servers: HashMap<Uuid, String> = server_names(&state, account).await?.into_iter().collect();
    let actor = caller.actor(&state);
    audit::record(
        &state.pool,
        AuditEntry {
            account_id: Some(account),
            actor: &actor,
            action: "chat_exported",
            target: None,
            detail: form.audit_detail(),
        },
    )
    .await?;
    let export = Export {
        reads: state.reads.clone(),
        account,
        filter,
        // The whole filter from its newest line: the page's cursor is not the export's.
        list: ListParams {
            page: PageRequest::default(),
            ..list
        },
        servers,
        next: Start::Header,
    };
    let body = Body::from_stream(futures::stream::try_unfold(export, Export::next_chunk));
    let filename = format!("chat-{}.csv", Utc::now().format("%Y%m%dT%H%M%SZ"));
    Ok((
        [
            (CONTENT_TYPE, "text/csv; charset=utf-8".to_owned()),
            (
                CONTENT_DISPOSITION,
                format!("attachment; filename=\"{filename}\""),
            ),
        ],
        body,
    )
        .into_response())
}

/// Where the next chunk starts.
#[derive(Debug, Clone, Copy)]
enum Start {
    /// The header line, then the newest rows.
    Header,
    /// The rows after this one.
    After(HistoryCursor),
    /// Nothing left.
    Done,
}

/// An export under way.
struct Export {
    reads: PgPool,
    account: Uuid,
    filter: ChatFilter,
    list: ListParams,
    servers: HashMap<Uuid, String>,
    next: Start,
}

impl Export {
    /// The next chunk's text, or `None` at the end. A database failure ends the body with an
    /// error (the client sees a broken download, never a short file that looks whole).
    async fn next_chunk(mut self) -> Result<Option<(Bytes, Export)>, sqlx::Error> {
        let mut out = String::new();
        let cursor = match self.next {
            Start::Done => return Ok(None),
            Start::Header => {
                push_record(&mut out, HEADER);
                None
            }
            Start::After(cursor) => Some(cursor),
        };
        self.list.page = PageRequest {
            limit: EXPORT_CHUNK,
            cursor,
        };
        let mut sql = select_chat(self.account, &self.filter, &self.list);
        // EXPORT_CHUNK + 1 rows: the extra one only says that another chunk follows.
        self.list.page.push_keyset(&mut sql, "c.sent_at", "c.id");
        let mut rows = sql.build_query_as::<AccountChatEntry>().fetch(&self.reads);
        let mut written = 0;
        let mut last = None;
        self.next = Start::Done;
        while let Some(line) = rows.try_next().await.inspect_err(|error| {
            tracing::error!(%error, "chat export failed");
        })? {
            if written == EXPORT_CHUNK {
                self.next = last.map_or(Start::Done, Start::After);
                break;
            }
            self.push_line(&mut out, &line);
            last = Some(line.position());
            written += 1;
        }
        drop(rows);
        Ok(Some((Bytes::from(out), self)))
    }

    /// Appends one line as a CSV record.
    fn push_line(&self, out: &mut String, line: &AccountChatEntry) {
        let entry = &line.entry;
        let sent_at = entry
            .sent_at
            .to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
        let server_id = entry.server_id.to_string();
        let server = server_label(&self.servers, entry.server_id);
        let player = line.player_uuid.to_string();
        let id = entry.id.to_string();
        push_record(
            out,
            [
                sent_at.as_str(),
                server_id.as_str(),
                server.as_str(),
                player.as_str(),
                line.player_username.as_deref().unwrap_or(""),
                entry.entry_type.as_str(),
                entry.channel.as_deref().unwrap_or(""),
                entry.message.as_str(),
                id.as_str(),
            ],
        );
    }
}
