//! Chat (contract §5, §7 chatlog): one row of `chat_messages` per chat entry, messages and
//! commands alike.
//!
//! The hot path: fleets post 100-record chat batches continuously. Rows are gathered as
//! columns straight from the decoded records (borrowing their text, no per-row allocation)
//! and written with one `INSERT ... SELECT FROM UNNEST` per [`ROWS_PER_STATEMENT`] rows. An
//! id the account already has is kept as first stored, so a late retry or a replay changes
//! nothing.
//!
//! An entry whose text is erased (its player's key or its day's chat key destroyed,
//! so it reads as empty) is not stored: a chat line without its text says nothing. It still
//! counts where chat is counted (the timeline's internal events and their trends, active
//! days), which read the record, not this table.

use super::Positioned;
use super::bulk::{self, BinaryRows};
use chrono::{DateTime, Utc};
use shared::envelope::RecordBatch;
use shared::records::ChatEntryType;
use sqlx::PgConnection;
use uuid::Uuid;

/// Rows per INSERT: measured at ~125k rows/s with this table's indexes in batches of 1-5k.
const ROWS_PER_STATEMENT: usize = 5_000;

/// The `chat_messages` rows of a chunk, column by column (as UNNEST takes them).
#[derive(Debug, Default, PartialEq)]
pub struct ChatColumns<'a> {
    /// Owning account.
    pub account_id: Vec<Uuid>,
    /// The entry's event id.
    pub id: Vec<Uuid>,
    /// The speaker.
    pub player_uuid: Vec<Uuid>,
    /// Where it was said.
    pub server_id: Vec<Uuid>,
    /// `chat` or `command`.
    pub entry_type: Vec<&'static str>,
    /// The text.
    pub message: Vec<&'a str>,
    /// Channel, when the plugin said.
    pub channel: Vec<Option<&'a str>>,
    /// When it was sent (the time of receipt when the record had none).
    pub sent_at: Vec<DateTime<Utc>>,
}

impl<'a> ChatColumns<'a> {
    /// The chat rows of `messages`, in log order.
    pub fn of(messages: &[&'a Positioned]) -> ChatColumns<'a> {
        let rows = messages
            .iter()
            .map(|m| match &m.message.batch {
                RecordBatch::Chat(records) => records.len(),
                _ => 0,
            })
            .sum();
        let mut columns = ChatColumns::with_capacity(rows);
        for m in messages {
            let RecordBatch::Chat(records) = &m.message.batch else {
                continue;
            };
            for logged in records {
                let entry = &logged.record;
                // Ingest refuses an empty text, so an empty one is an erased one.
                if entry.message.is_empty() {
                    continue;
                }
                columns.account_id.push(m.message.account_id);
                columns.id.push(logged.id);
                columns.player_uuid.push(entry.player_uuid);
                columns.server_id.push(entry.server_id);
                columns.entry_type.push(match entry.entry_type {
                    ChatEntryType::Chat => "chat",
                    ChatEntryType::Command => "command",
                });
                columns.message.push(&entry.message);
                columns.channel.push(entry.channel.as_deref());
                columns
                    .sent_at
                    .push(entry.sent_at.unwrap_or(m.message.received_at));
            }
        }
        columns
    }

    fn with_capacity(rows: usize) -> Self {
        ChatColumns {
            account_id: Vec::with_capacity(rows),
            id: Vec::with_capacity(rows),
            player_uuid: Vec::with_capacity(rows),
            server_id: Vec::with_capacity(rows),
            entry_type: Vec::with_capacity(rows),
            message: Vec::with_capacity(rows),
            channel: Vec::with_capacity(rows),
            sent_at: Vec::with_capacity(rows),
        }
    }

    /// How many rows.
    pub fn len(&self) -> usize {
        self.id.len()
    }

    /// True when there is no row.
    pub fn is_empty(&self) -> bool {
        self.id.is_empty()
    }
}

/// Chat messages and commands.
#[derive(Debug, Clone, Copy)]
pub struct Chat;

read_model! { Chat: "chat", tables: ["chat_messages"], fold: apply, bulk: apply_bulk }

/// Inserts the chat rows of `messages`; returns the rows inserted. Public so the benchmark's
/// raw-insert baseline measures exactly these statements.
pub async fn apply(conn: &mut PgConnection, messages: &[&Positioned]) -> Result<u64, sqlx::Error> {
    let columns = ChatColumns::of(messages);
    let mut inserted = 0;
    for rows in super::statement_ranges(columns.len(), ROWS_PER_STATEMENT) {
        inserted += insert(conn, &columns, rows).await?;
    }
    Ok(inserted)
}

/// [`apply`] into a rebuild's copy: one binary `COPY` of the rows, or [`apply`] when
/// PostgreSQL refuses it (a repeated id, a value it refuses), under a savepoint.
pub(crate) async fn apply_bulk(
    conn: &mut PgConnection,
    messages: &[&Positioned],
) -> Result<u64, sqlx::Error> {
    let c = ChatColumns::of(messages);
    let mut rows = BinaryRows::new(8);
    for i in 0..c.len() {
        rows.row()
            .uuid(c.account_id[i])
            .uuid(c.id[i])
            .uuid(c.player_uuid[i])
            .uuid(c.server_id[i])
            .text(c.entry_type[i])
            .text(c.message[i])
            .text_or_null(c.channel[i])
            .timestamptz(c.sent_at[i]);
    }
    let into = "chat_messages (account_id, id, player_uuid, server_id, entry_type, message, \
                channel, sent_at)";
    if bulk::copy_or_refused(conn, into, rows).await? {
        return Ok(c.len() as u64);
    }
    apply(conn, messages).await
}

async fn insert(
    conn: &mut PgConnection,
    c: &ChatColumns<'_>,
    rows: std::ops::Range<usize>,
) -> Result<u64, sqlx::Error> {
    let result = sqlx::query(
        "INSERT INTO chat_messages (account_id, id, player_uuid, server_id, entry_type, message,
                                    channel, sent_at)
         SELECT * FROM UNNEST($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::text[],
                              $6::text[], $7::text[], $8::timestamptz[])
         ON CONFLICT (account_id, id) DO NOTHING",
    )
    .bind(&c.account_id[rows.clone()])
    .bind(&c.id[rows.clone()])
    .bind(&c.player_uuid[rows.clone()])
    .bind(&c.server_id[rows.clone()])
    .bind(&c.entry_type[rows.clone()])
    .bind(&c.message[rows.clone()])
    .bind(&c.channel[rows.clone()])
    .bind(&c.sent_at[rows])
    .execute(conn)
    .await?;
    Ok(result.rows_affected())
}

#[cfg(test)]
#[path = "chat_tests.rs"]
mod tests;
