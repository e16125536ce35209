//! The records a game-server plugin writes (contract §5), with their validation.
//!
//! One struct per record kind. Each is both the accepted input shape and the payload logged in
//! the event stream: ingest validates it, then [`PluginRecord::normalize`] fills omitted
//! timestamps with the time of receipt and replaces secrets (a player's IP) by their keyed hash,
//! so the log never holds them in clear.

mod account_link;
mod anticheat_flag;
mod chat;
mod custom_event;
mod heartbeat;
mod punishment;
mod rank_change;
mod session;

pub use account_link::{AccountLink, LinkAction};
pub use anticheat_flag::AnticheatFlag;
pub use chat::{ChatEntry, ChatEntryType};
pub use custom_event::{CustomEvent, MAX_PROPERTIES_BYTES, MAX_PROPERTIES_DEPTH, json_depth};
pub use heartbeat::Heartbeat;
pub use punishment::{Punishment, PunishmentAction, PunishmentType};
pub use rank_change::{RankAction, RankChange};
pub use session::{IpHasher, Session, SessionEvent};

use crate::envelope::{Logged, RecordBatch};
use crate::validation::FieldError;
use chrono::{DateTime, Utc};
use serde::{Serialize, de::DeserializeOwned};
use uuid::Uuid;

/// What kind of record a log message holds; part of its subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordKind {
    /// Server status.
    Heartbeat,
    /// Chat messages and commands.
    Chat,
    /// Punishments issued or revoked.
    Punishment,
    /// Anti-cheat flags.
    AnticheatFlag,
    /// Joins and quits.
    Session,
    /// Permission-group changes.
    RankChange,
    /// Links to chat-platform accounts.
    AccountLink,
    /// Custom events.
    Custom,
}

impl RecordKind {
    /// Every kind, in a fixed order.
    pub const ALL: [RecordKind; 8] = [
        RecordKind::Heartbeat,
        RecordKind::Chat,
        RecordKind::Punishment,
        RecordKind::AnticheatFlag,
        RecordKind::Session,
        RecordKind::RankChange,
        RecordKind::AccountLink,
        RecordKind::Custom,
    ];

    /// The kind's token in subjects, metrics and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            RecordKind::Heartbeat => "heartbeat",
            RecordKind::Chat => "chat",
            RecordKind::Punishment => "punishment",
            RecordKind::AnticheatFlag => "anticheat_flag",
            RecordKind::Session => "session",
            RecordKind::RankChange => "rank_change",
            RecordKind::AccountLink => "account_link",
            RecordKind::Custom => "custom",
        }
    }
}

/// A record kind that the plugin API accepts.
pub trait PluginRecord: DeserializeOwned + Serialize + Send + Sync + Sized + 'static {
    /// The kind, used in subjects and in the envelope.
    const KIND: RecordKind;

    /// The rules of contract §5 beyond the JSON shape; `now` is the time of receipt.
    fn validate(&self, now: DateTime<Utc>) -> Result<(), Vec<FieldError>>;

    /// Fills omitted timestamps with `received_at` and hashes what must not be stored in clear.
    fn normalize(&mut self, received_at: DateTime<Utc>, ip_hasher: &IpHasher);

    /// The sending server, when the record names one.
    fn server_id(&self) -> Option<Uuid>;

    /// The extra subject token after the kind (the custom event's name), if any.
    fn subject_name(&self) -> Option<&str> {
        None
    }

    /// Wraps records of this kind into the log's tagged batch.
    fn into_batch(records: Vec<Logged<Self>>) -> RecordBatch;
}
