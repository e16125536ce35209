//! Staff notes: one row of `notes` per `note` record.
//!
//! Only query-api writes notes to the log, after validating them; the fold checks each again
//! with the same [`Note::validate`](shared::records::Note::validate), against the message's
//! time of receipt (so a replay judges it exactly as the first pass did), and skips one that
//! breaks a rule instead of stopping on a row PostgreSQL would refuse: a hostile note can never
//! stall the projector. A note whose text is erased (it reads as empty once its
//! player's key is destroyed) is not stored, and not counted as skipped either.

use super::Positioned;
use chrono::{DateTime, Utc};
use serde_json::Value;
use shared::envelope::{RecordBatch, event_seq};
use sqlx::PgConnection;
use uuid::Uuid;

/// Rows per INSERT: batched, yet bounded so one statement's arrays stay small.
const ROWS_PER_STATEMENT: usize = 2_000;

/// The `notes` rows of a chunk, column by column (as UNNEST takes them).
#[derive(Debug, Default, PartialEq)]
pub struct NoteColumns<'a> {
    /// Owning account.
    pub account_id: Vec<Uuid>,
    /// The note's event id.
    pub id: Vec<Uuid>,
    /// The player it is about.
    pub player_uuid: Vec<Uuid>,
    /// The punishment it is about, if any.
    pub punishment_id: Vec<Option<Uuid>>,
    /// The text.
    pub text: Vec<&'a str>,
    /// The evidence links, as a JSON array.
    pub evidence: Vec<Value>,
    /// The author's member id.
    pub author_member_id: Vec<Uuid>,
    /// The author's display name at the time.
    pub author_name: Vec<&'a str>,
    /// When it was written.
    pub written_at: Vec<DateTime<Utc>>,
    /// Its timeline position.
    pub seq: Vec<i64>,
    /// Notes skipped because they break a rule.
    pub skipped: usize,
}

impl<'a> NoteColumns<'a> {
    /// The note rows of `messages`, in log order; invalid notes are counted, not kept.
    pub fn of(messages: &[&'a Positioned]) -> NoteColumns<'a> {
        let mut columns = NoteColumns::default();
        for m in messages {
            let RecordBatch::Note(records) = &m.message.batch else {
                continue;
            };
            for (index, logged) in records.iter().enumerate() {
                let note = &logged.record;
                if note.text.is_empty() {
                    continue;
                }
                if let Err(errors) = note.validate(m.message.received_at) {
                    tracing::warn!(
                        stream_sequence = m.stream_sequence,
                        note_id = %logged.id,
                        ?errors,
                        "skipped a note that breaks the note rules"
                    );
                    columns.skipped += 1;
                    continue;
                }
                columns.account_id.push(m.message.account_id);
                columns.id.push(logged.id);
                columns.player_uuid.push(note.player_uuid);
                columns.punishment_id.push(note.punishment_id);
                columns.text.push(&note.text);
                columns.evidence.push(Value::from(note.evidence.clone()));
                columns.author_member_id.push(note.author.member_id);
                columns.author_name.push(&note.author.name);
                columns.written_at.push(note.written_at);
                columns.seq.push(event_seq(m.stream_sequence, index));
            }
        }
        columns
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

/// Staff notes.
#[derive(Debug, Clone, Copy)]
pub struct Notes;

read_model! { Notes: "notes", tables: ["notes"], fold: apply }

/// Inserts the note rows of `messages`; returns the rows inserted.
pub(crate) async fn apply(
    conn: &mut PgConnection,
    messages: &[&Positioned],
) -> Result<u64, sqlx::Error> {
    let columns = NoteColumns::of(messages);
    if columns.skipped > 0 {
        metrics::counter!("projector_notes_skipped_total").increment(columns.skipped as u64);
    }
    let mut inserted = 0;
    for rows in super::statement_ranges(columns.len(), ROWS_PER_STATEMENT) {
        inserted += insert(conn, &columns, rows).await?;
    }
    Ok(inserted)
}

async fn insert(
    conn: &mut PgConnection,
    c: &NoteColumns<'_>,
    rows: std::ops::Range<usize>,
) -> Result<u64, sqlx::Error> {
    let result = sqlx::query(
        "INSERT INTO notes (account_id, id, player_uuid, punishment_id, text, evidence,
                            author_member_id, author_name, written_at, seq)
         SELECT * FROM UNNEST($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::text[],
                              $6::jsonb[], $7::uuid[], $8::text[], $9::timestamptz[],
                              $10::bigint[])
         ON CONFLICT (account_id, id) DO NOTHING",
    )
    .bind(&c.account_id[rows.clone()])
    .bind(&c.id[rows.clone()])
    .bind(&c.player_uuid[rows.clone()])
    .bind(&c.punishment_id[rows.clone()])
    .bind(&c.text[rows.clone()])
    .bind(&c.evidence[rows.clone()])
    .bind(&c.author_member_id[rows.clone()])
    .bind(&c.author_name[rows.clone()])
    .bind(&c.written_at[rows.clone()])
    .bind(&c.seq[rows])
    .execute(conn)
    .await?;
    Ok(result.rows_affected())
}

#[cfg(test)]
#[path = "notes_tests.rs"]
mod tests;
