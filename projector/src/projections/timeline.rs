//! The event timeline (contract §6, §8): every custom event, and an internal event for every
//! session, chat, punishment and rank-change record, as rows of `events`.
//!
//! Heartbeats, anti-cheat flags and account links have no timeline event; their messages
//! still advance the checkpoint.

use super::Positioned;
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Map, Value, json};
use shared::envelope::{LogMessage, Logged, RecordBatch, event_seq};
use shared::records::{ChatEntryType, PunishmentAction, SessionEvent};
use sqlx::PgConnection;
use uuid::Uuid;

/// Rows per INSERT: batched, yet bounded so one statement's parameters stay small.
const ROWS_PER_STATEMENT: usize = 2_000;

/// One row of `events`.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelineEvent {
    /// Owning account.
    pub account_id: Uuid,
    /// The logged event id (the client's `id` when it sent one).
    pub id: Uuid,
    /// Position in the log ([`event_seq`]).
    pub seq: i64,
    /// Event name (`session_join`, `chat_message`, a custom name, ...).
    pub name: String,
    /// True for the events the service records itself.
    pub is_internal: bool,
    /// The player, when there is one.
    pub player_uuid: Option<Uuid>,
    /// The server, when the record names one.
    pub server_id: Option<Uuid>,
    /// JSON text; for custom events exactly as the client sent it.
    pub properties: String,
    /// When it happened.
    pub occurred_at: DateTime<Utc>,
    /// When ingest received it.
    pub received_at: DateTime<Utc>,
}

/// The timeline rows of one log message, in log order.
pub fn events_of(stream_sequence: u64, message: &LogMessage) -> Vec<TimelineEvent> {
    let received_at = message.received_at;
    let row = |index: usize, id: Uuid, event: Internal| TimelineEvent {
        account_id: message.account_id,
        id,
        seq: event_seq(stream_sequence, index),
        name: event.name,
        is_internal: event.is_internal,
        player_uuid: event.player_uuid,
        server_id: event.server_id,
        properties: event.properties,
        occurred_at: event.occurred_at.unwrap_or(received_at),
        received_at,
    };
    fn each<T>(
        records: &[Logged<T>],
        map: impl Fn(&T) -> Internal,
        row: impl Fn(usize, Uuid, Internal) -> TimelineEvent,
    ) -> Vec<TimelineEvent> {
        records
            .iter()
            .enumerate()
            .map(|(index, logged)| row(index, logged.id, map(&logged.record)))
            .collect()
    }
    match &message.batch {
        RecordBatch::Custom(records) => each(records, custom, row),
        RecordBatch::Session(records) => each(records, session, row),
        RecordBatch::Chat(records) => each(records, chat, row),
        RecordBatch::Punishment(records) => each(records, punishment, row),
        RecordBatch::RankChange(records) => each(records, rank_change, row),
        RecordBatch::Heartbeat(_) | RecordBatch::AnticheatFlag(_) | RecordBatch::AccountLink(_) => {
            Vec::new()
        }
    }
}

/// A record's timeline event, before it gets its place in the log.
struct Internal {
    name: String,
    is_internal: bool,
    player_uuid: Option<Uuid>,
    server_id: Option<Uuid>,
    properties: String,
    occurred_at: Option<DateTime<Utc>>,
}

fn custom(event: &shared::records::CustomEvent) -> Internal {
    // The exact text as logged: re-serializing would change number formatting and key order.
    let properties = event
        .properties
        .as_ref()
        .map(|raw| raw.get())
        .filter(|text| *text != "null")
        .unwrap_or("{}");
    Internal {
        name: event.name.clone(),
        is_internal: false,
        player_uuid: Some(event.player_uuid),
        server_id: None,
        properties: properties.to_owned(),
        occurred_at: event.occurred_at,
    }
}

fn session(record: &shared::records::Session) -> Internal {
    let name = match record.event {
        SessionEvent::Join => "session_join",
        SessionEvent::Quit => "session_quit",
    };
    // Never the ip_hash: the timeline is readable by every dashboard key of the account.
    let properties = json!({
        "player_name": record.player_name,
        "client_version": record.client_version,
    });
    internal(
        name,
        record.player_uuid,
        Some(record.server_id),
        &properties,
        record.at,
    )
}

fn chat(record: &shared::records::ChatEntry) -> Internal {
    let name = match record.entry_type {
        ChatEntryType::Chat => "chat_message",
        ChatEntryType::Command => "chat_command",
    };
    let properties = json!({
        "message": record.message,
        "channel": record.channel,
        "player_name": record.player_name,
    });
    internal(
        name,
        record.player_uuid,
        Some(record.server_id),
        &properties,
        record.sent_at,
    )
}

fn punishment(record: &shared::records::Punishment) -> Internal {
    let name = match record.action {
        PunishmentAction::Revoke => "punish_revoke".to_owned(),
        PunishmentAction::Issue => format!("punish_{}", record.punishment_type.as_str()),
    };
    let properties = Value::Object(fields_except(record));
    internal(
        &name,
        record.player_uuid,
        Some(record.server_id),
        &properties,
        record.issued_at,
    )
}

fn rank_change(record: &shared::records::RankChange) -> Internal {
    let properties = Value::Object(fields_except(record));
    internal(
        "rank_change",
        record.player_uuid,
        record.server_id,
        &properties,
        record.changed_at,
    )
}

fn internal(
    name: &str,
    player_uuid: Uuid,
    server_id: Option<Uuid>,
    properties: &Value,
    occurred_at: Option<DateTime<Utc>>,
) -> Internal {
    Internal {
        name: name.to_owned(),
        is_internal: true,
        player_uuid: Some(player_uuid),
        server_id,
        properties: properties.to_string(),
        occurred_at,
    }
}

/// The record's own fields as a JSON object, minus the ones the row has as columns.
fn fields_except(record: &impl Serialize) -> Map<String, Value> {
    match serde_json::to_value(record) {
        Ok(Value::Object(mut fields)) => {
            fields.remove("player_uuid");
            fields.remove("server_id");
            fields
        }
        // The record structs are plain data with string keys: this cannot happen, and a
        // poisoned consumer loop would be worse than an event with no properties.
        other => {
            tracing::error!(?other, "a record did not serialize to a JSON object");
            Map::new()
        }
    }
}

/// Inserts the timeline rows of `messages`; an event id the account already has is kept as
/// first stored (a late retry, or a replay). Returns the rows inserted.
pub(crate) async fn apply(
    conn: &mut PgConnection,
    messages: &[&Positioned],
) -> Result<u64, sqlx::Error> {
    let events: Vec<TimelineEvent> = messages
        .iter()
        .flat_map(|m| events_of(m.stream_sequence, &m.message))
        .collect();
    let mut inserted = 0;
    for batch in events.chunks(ROWS_PER_STATEMENT) {
        inserted += insert(conn, batch).await?;
    }
    Ok(inserted)
}

async fn insert(conn: &mut PgConnection, events: &[TimelineEvent]) -> Result<u64, sqlx::Error> {
    let column = |f: fn(&TimelineEvent) -> Option<Uuid>| events.iter().map(f).collect::<Vec<_>>();
    let result = sqlx::query(
        "INSERT INTO events (account_id, id, seq, name, is_internal, player_uuid, server_id,
                             properties, occurred_at, received_at)
         SELECT account_id, id, seq, name, is_internal, player_uuid, server_id,
                properties::json, occurred_at, received_at
         FROM UNNEST($1::uuid[], $2::uuid[], $3::bigint[], $4::text[], $5::boolean[],
                     $6::uuid[], $7::uuid[], $8::text[], $9::timestamptz[], $10::timestamptz[])
              AS t(account_id, id, seq, name, is_internal, player_uuid, server_id,
                   properties, occurred_at, received_at)
         ON CONFLICT (account_id, id) DO NOTHING",
    )
    .bind(events.iter().map(|e| e.account_id).collect::<Vec<_>>())
    .bind(events.iter().map(|e| e.id).collect::<Vec<_>>())
    .bind(events.iter().map(|e| e.seq).collect::<Vec<_>>())
    .bind(events.iter().map(|e| e.name.as_str()).collect::<Vec<_>>())
    .bind(events.iter().map(|e| e.is_internal).collect::<Vec<_>>())
    .bind(column(|e| e.player_uuid))
    .bind(column(|e| e.server_id))
    .bind(
        events
            .iter()
            .map(|e| e.properties.as_str())
            .collect::<Vec<_>>(),
    )
    .bind(events.iter().map(|e| e.occurred_at).collect::<Vec<_>>())
    .bind(events.iter().map(|e| e.received_at).collect::<Vec<_>>())
    .execute(conn)
    .await?;
    Ok(result.rows_affected())
}

#[cfg(test)]
#[path = "timeline_tests.rs"]
mod tests;
