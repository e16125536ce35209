//! The versioned envelope of the event log.
//!
//! One log message carries the records of one accepted request that share a subject (one
//! record kind, and for custom events one name), or of several requests that ingest merged
//! while they waited for the same subject (its `coalesce` module). Fields common to the whole message (version,
//! account, time of receipt, kind) are stated once; each record carries its event id and
//! payload, and the payload names its server. Together they make each record's envelope:
//! event id, account, kind, server, received time, payload ([`LogMessage::envelopes`]).
//!
//! Batching records per message is what makes a durable log fast: with `sync_interval: always`
//! every JetStream publish is an fsync, so a 100-record chat batch costs one fsync, not 100.

use crate::records::{
    AccountLink, Action, ActionAck, AnticheatFlag, Appeal, ChatEntry, CustomEvent, Heartbeat, Note,
    PlayerErasure, PluginRecord, Punishment, RankChange, RecordKind, Session,
};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The envelope version this build writes and reads.
pub const ENVELOPE_VERSION: u16 = 1;

/// Records per log message at most (the batch limit of contract §1); part of the `seq` scheme.
pub const MAX_RECORDS_PER_MESSAGE: u64 = 1000;

/// One message of the event log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogMessage {
    /// Envelope version ([`ENVELOPE_VERSION`]).
    pub v: u16,
    /// The account whose key wrote the records.
    pub account_id: Uuid,
    /// When ingest received the request.
    pub received_at: DateTime<Utc>,
    /// The records, tagged by kind.
    pub batch: RecordBatch,
}

/// A record with the event id it is logged under (the client's `id`, or one ingest assigned).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Logged<T> {
    /// Event id: unique per account; a record with a known id is stored once.
    pub id: Uuid,
    /// The payload.
    pub record: T,
}

/// The records of one log message, all of one kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "records", rename_all = "snake_case")]
pub enum RecordBatch {
    /// Heartbeats.
    Heartbeat(Vec<Logged<Heartbeat>>),
    /// Chat messages and commands.
    Chat(Vec<Logged<ChatEntry>>),
    /// Punishments issued or revoked.
    Punishment(Vec<Logged<Punishment>>),
    /// Anti-cheat flags.
    AnticheatFlag(Vec<Logged<AnticheatFlag>>),
    /// Joins and quits.
    Session(Vec<Logged<Session>>),
    /// Rank changes.
    RankChange(Vec<Logged<RankChange>>),
    /// Account links.
    AccountLink(Vec<Logged<AccountLink>>),
    /// Custom events.
    Custom(Vec<Logged<CustomEvent>>),
    /// Staff notes (written by query-api for the dashboard; no plugin route accepts them).
    Note(Vec<Logged<Note>>),
    /// Player erasures (written by query-api; no plugin route accepts them).
    Erasure(Vec<Logged<PlayerErasure>>),
    /// Dashboard actions (written by query-api; no plugin route accepts them).
    Action(Vec<Logged<Action>>),
    /// Servers' answers to dashboard actions.
    ActionAck(Vec<Logged<ActionAck>>),
    /// Appeals and the steps staff took on them (written by query-api; no plugin route
    /// accepts them).
    Appeal(Vec<Logged<Appeal>>),
}

/// One record's full envelope, as read from a [`LogMessage`].
#[derive(Debug, Clone, Copy)]
pub struct Envelope {
    /// Event id.
    pub id: Uuid,
    /// Owning account.
    pub account_id: Uuid,
    /// Record kind.
    pub kind: RecordKind,
    /// Sending server, when the record names one.
    pub server_id: Option<Uuid>,
    /// Time of receipt.
    pub received_at: DateTime<Utc>,
    /// Position of the record in its message (0-based).
    pub index: usize,
}

/// Why a log message could not be read.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    /// Written by a newer (or unknown) envelope version.
    #[error("unsupported envelope version {0} (this build reads version {ENVELOPE_VERSION})")]
    UnknownVersion(u16),
    /// Not a valid envelope.
    #[error("undecodable log message: {0}")]
    Malformed(#[from] serde_json::Error),
}

#[derive(Deserialize)]
struct VersionProbe {
    v: u16,
}

impl LogMessage {
    /// Builds a message of the current version.
    pub fn new(account_id: Uuid, received_at: DateTime<Utc>, batch: RecordBatch) -> Self {
        Self {
            v: ENVELOPE_VERSION,
            account_id,
            received_at,
            batch,
        }
    }

    /// Reads a message from the log, refusing unknown versions.
    pub fn decode(bytes: &[u8]) -> Result<LogMessage, DecodeError> {
        let probe: VersionProbe = serde_json::from_slice(bytes)?;
        if probe.v != ENVELOPE_VERSION {
            return Err(DecodeError::UnknownVersion(probe.v));
        }
        Ok(serde_json::from_slice(bytes)?)
    }

    /// The bytes written to the log.
    pub fn encode(&self) -> Vec<u8> {
        // Serializing plain data with string keys cannot fail.
        serde_json::to_vec(self).unwrap_or_else(|e| unreachable!("log message serializes: {e}"))
    }

    /// The kind of the records inside.
    pub fn kind(&self) -> RecordKind {
        self.batch.kind()
    }

    /// Every record's envelope, in log order.
    pub fn envelopes(&self) -> Vec<Envelope> {
        fn each<T: PluginRecord>(m: &LogMessage, records: &[Logged<T>]) -> Vec<Envelope> {
            of_kind(m, records, T::KIND, |r| r.server_id())
        }
        fn of_kind<T>(
            m: &LogMessage,
            records: &[Logged<T>],
            kind: RecordKind,
            server_id: impl Fn(&T) -> Option<Uuid>,
        ) -> Vec<Envelope> {
            records
                .iter()
                .enumerate()
                .map(|(index, r)| Envelope {
                    id: r.id,
                    account_id: m.account_id,
                    kind,
                    server_id: server_id(&r.record),
                    received_at: m.received_at,
                    index,
                })
                .collect()
        }
        match &self.batch {
            RecordBatch::Heartbeat(r) => each(self, r),
            RecordBatch::Chat(r) => each(self, r),
            RecordBatch::Punishment(r) => each(self, r),
            RecordBatch::AnticheatFlag(r) => each(self, r),
            RecordBatch::Session(r) => each(self, r),
            RecordBatch::RankChange(r) => each(self, r),
            RecordBatch::AccountLink(r) => each(self, r),
            RecordBatch::Custom(r) => each(self, r),
            // A note names no server: it was written on the dashboard.
            RecordBatch::Note(r) => of_kind(self, r, Note::KIND, |_| None),
            RecordBatch::Erasure(r) => of_kind(self, r, PlayerErasure::KIND, |_| None),
            // An action names no server either; its acknowledgements name the server that acted.
            RecordBatch::Action(r) => of_kind(self, r, Action::KIND, |_| None),
            RecordBatch::ActionAck(r) => each(self, r),
            RecordBatch::Appeal(r) => of_kind(self, r, Appeal::KIND, |_| None),
        }
    }
}

impl RecordBatch {
    /// The kind of the records inside.
    pub fn kind(&self) -> RecordKind {
        match self {
            RecordBatch::Heartbeat(_) => RecordKind::Heartbeat,
            RecordBatch::Chat(_) => RecordKind::Chat,
            RecordBatch::Punishment(_) => RecordKind::Punishment,
            RecordBatch::AnticheatFlag(_) => RecordKind::AnticheatFlag,
            RecordBatch::Session(_) => RecordKind::Session,
            RecordBatch::RankChange(_) => RecordKind::RankChange,
            RecordBatch::AccountLink(_) => RecordKind::AccountLink,
            RecordBatch::Custom(_) => RecordKind::Custom,
            RecordBatch::Note(_) => RecordKind::Note,
            RecordBatch::Erasure(_) => RecordKind::Erasure,
            RecordBatch::Action(_) => RecordKind::Action,
            RecordBatch::ActionAck(_) => RecordKind::ActionAck,
            RecordBatch::Appeal(_) => RecordKind::Appeal,
        }
    }

    /// How many records it holds.
    pub fn len(&self) -> usize {
        match self {
            RecordBatch::Heartbeat(r) => r.len(),
            RecordBatch::Chat(r) => r.len(),
            RecordBatch::Punishment(r) => r.len(),
            RecordBatch::AnticheatFlag(r) => r.len(),
            RecordBatch::Session(r) => r.len(),
            RecordBatch::RankChange(r) => r.len(),
            RecordBatch::AccountLink(r) => r.len(),
            RecordBatch::Custom(r) => r.len(),
            RecordBatch::Note(r) => r.len(),
            RecordBatch::Erasure(r) => r.len(),
            RecordBatch::Action(r) => r.len(),
            RecordBatch::ActionAck(r) => r.len(),
            RecordBatch::Appeal(r) => r.len(),
        }
    }

    /// True when it holds no record.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The event's position on the timeline: `stream_sequence * 1000 + index in the message`.
///
/// Monotonic in log order, unique, and exact in JavaScript up to stream sequence 9e12.
pub fn event_seq(stream_sequence: u64, index: usize) -> i64 {
    (stream_sequence * MAX_RECORDS_PER_MESSAGE + index as u64) as i64
}

/// The stream sequence a timeline `seq` belongs to (inverse of [`event_seq`]).
pub fn stream_sequence_of(seq: i64) -> u64 {
    seq.max(0) as u64 / MAX_RECORDS_PER_MESSAGE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn custom_events_round_trip_with_raw_properties() {
        let event: CustomEvent = serde_json::from_str(
            r#"{"player_uuid":"069a79f4-44e9-4726-a5be-fca90e38aaf5","name":"x","properties":{"n":1.10}}"#,
        )
        .expect("event");
        let message = LogMessage::new(
            Uuid::now_v7(),
            Utc::now(),
            RecordBatch::Custom(vec![Logged {
                id: Uuid::now_v7(),
                record: event,
            }]),
        );
        let decoded = LogMessage::decode(&message.encode()).expect("decodes");
        assert_eq!(decoded, message);
        assert_eq!(decoded.kind(), RecordKind::Custom);
        assert_eq!(decoded.envelopes().len(), 1);
    }

    #[test]
    fn unknown_versions_are_refused() {
        let err = LogMessage::decode(br#"{"v":2,"account_id":"x"}"#).unwrap_err();
        assert!(matches!(err, DecodeError::UnknownVersion(2)));
        assert!(matches!(
            LogMessage::decode(b"not json"),
            Err(DecodeError::Malformed(_))
        ));
    }

    #[test]
    fn seq_encodes_stream_position() {
        assert_eq!(event_seq(7, 3), 7003);
        assert_eq!(stream_sequence_of(7003), 7);
        assert!(event_seq(7, 999) < event_seq(8, 0));
    }
}
