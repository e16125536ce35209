//! The event timeline (contract §6, §8) as a pure mapping from log messages to events: every
//! custom event, and an internal event for every session, chat, punishment and rank-change
//! record. The projector stores them as rows of `events`; query-api streams them live.
//!
//! Heartbeats, anti-cheat flags and account links have no timeline event.

use crate::envelope::{LogMessage, Logged, RecordBatch, event_seq};
use crate::records::{ChatEntryType, PunishmentAction, SessionEvent};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Map, Value, json};
use uuid::Uuid;

/// The timeline events the Overview's activity list shows (contract §6), besides anti-cheat
/// flags: what the projector keeps in `recent_events`.
pub const ACTIVITY_EVENTS: [&str; 8] = [
    "session_join",
    "session_quit",
    "punish_ban",
    "punish_mute",
    "punish_kick",
    "punish_warning",
    "punish_revoke",
    "rank_change",
];

/// How many of its newest activity events (and, apart, anti-cheat flags) the projector keeps
/// per account in `recent_events` (`recent_flags`): at least what the Overview shows.
pub const RECENT_ACTIVITY_KEPT: i64 = 100;

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
        // A dashboard action is a punishment like a plugin's: the same events, with the
        // member's name as the staff name and no server.
        RecordBatch::Action(records) => each(records, action, row),
        // Notes are staff annotations with their own read model, not player events; an
        // erasure is an operator's act on the read models, not something the player did.
        RecordBatch::Heartbeat(_)
        | RecordBatch::AnticheatFlag(_)
        | RecordBatch::AccountLink(_)
        | RecordBatch::Note(_)
        | RecordBatch::Erasure(_)
        | RecordBatch::ActionAck(_)
        | RecordBatch::Appeal(_) => Vec::new(),
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

fn custom(event: &crate::records::CustomEvent) -> Internal {
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

fn session(record: &crate::records::Session) -> Internal {
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

fn chat(record: &crate::records::ChatEntry) -> Internal {
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

fn punishment(record: &crate::records::Punishment) -> Internal {
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

fn action(record: &crate::records::Action) -> Internal {
    let mut fields = Map::new();
    let name = if let Some(p) = &record.punishment {
        fields.insert("player_name".into(), json!(p.player_name));
        fields.insert("type".into(), json!(p.punishment_type));
        fields.insert("action".into(), json!("issue"));
        fields.insert("reason".into(), json!(p.reason));
        fields.insert("expires_at".into(), json!(p.expires_at));
        fields.insert("scope".into(), json!(p.scope));
        format!("punish_{}", p.punishment_type.as_str())
    } else if let Some(r) = &record.revoke {
        fields.insert("type".into(), json!(r.punishment_type));
        fields.insert("action".into(), json!("revoke"));
        fields.insert("punishment_id".into(), json!(r.punishment_id));
        fields.insert("external_id".into(), json!(r.external_id));
        fields.insert("revoke_reason".into(), json!(r.reason));
        "punish_revoke".to_owned()
    } else {
        // validate() refuses this shape; the projector skips such an action before here.
        "punish_revoke".to_owned()
    };
    fields.insert("staff_name".into(), json!(record.by.name));
    fields.insert(
        "source_plugin".into(),
        json!(crate::records::DASHBOARD_SOURCE),
    );
    fields.insert("issued_at".into(), json!(record.at));
    fields.retain(|_, v| !v.is_null());
    internal(
        &name,
        record.player_uuid(),
        None,
        &Value::Object(fields),
        Some(record.at),
    )
}

fn rank_change(record: &crate::records::RankChange) -> Internal {
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

impl TimelineEvent {
    /// The event as the API shows it (list items, SSE data): `id, seq, name, player_uuid,
    /// properties, occurred_at, received_at`, with `properties` emitted byte-exact.
    pub fn to_api_json(&self) -> String {
        let player = self
            .player_uuid
            .map(|p| format!("\"{p}\""))
            .unwrap_or_else(|| "null".into());
        let name = Value::String(self.name.clone()).to_string();
        format!(
            r#"{{"id":"{}","seq":{},"name":{name},"player_uuid":{player},"properties":{},"occurred_at":"{}","received_at":"{}"}}"#,
            self.id,
            self.seq,
            self.properties,
            self.occurred_at
                .to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
            self.received_at
                .to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
        )
    }
}

#[cfg(test)]
#[path = "timeline_tests.rs"]
mod tests;
