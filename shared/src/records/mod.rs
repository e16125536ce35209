//! The records a game-server plugin writes (contract §5), with their validation.
//!
//! One struct per record kind. Each is both the accepted input shape and the payload logged in
//! the event stream: ingest validates it, then [`PluginRecord::normalize`] fills omitted
//! timestamps with the time of receipt and replaces secrets (a player's IP) by their keyed hash,
//! so the log never holds them in clear.
//!
//! # Accepted means storable
//!
//! A record that ingest accepts must be applied by the projector, or the read side stops.
//! So `validate` refuses what the columns it lands in cannot hold, with the shared
//! rules of [`crate::validation`]; `projector/tests/projector/storable_property/` checks the
//! whole mapping on a real PostgreSQL. Field -> column (projector/migrations), and the rule:
//!
//! | Field(s) | Column type (indexed?) | Rule |
//! |---|---|---|
//! | every text field (names, message, reason, detail, channel, group, ids, versions) | `text` | no NUL (`invalid_characters`); length in characters |
//! | `group` -> `players.rank` | `text`, btree `players_account_rank_idx` | <= 64 chars = <= 256 bytes |
//! | punishment `source_plugin` + `external_id` | `text`, unique btree `punishments_external_idx`, `punishment_revokes_external_idx` | <= 64 + 128 chars = <= 768 bytes |
//! | custom `name` | `text`, btree `events_account_name_time_idx` | `^[a-z0-9_]{1,64}$` |
//! | `player_name` -> `players.username` | `text`, btree `players_username_prefix_idx` on `lower()`; GIN trigram over all names (`players_names_trgm_idx`) | <= 64 chars = <= 256 bytes |
//! | chat `message` | `text`, GIN trigram `chat_messages_message_trgm_idx` (trigrams only: no entry limit) | length in characters |
//! | custom `properties` | `json` (sent text, verbatim) | object, <= 64 KiB, <= 64 deep, no `\u0000` or unpaired surrogate in any string or key |
//! | heartbeat `player_count`, `max_players` | `integer` | `0..=2^31-1` |
//! | `tps`, `violation_level`, `ping_ms`, `memory_*_mb` | `double precision` | finite, bounded (e.g. tps 0..=1000) |
//! | every record time (`sent_at`, `at`, `timestamp`, `issued_at`, ...) | `timestamptz` | 2000-01-01T00:00:00Z ..= now + 10 min |
//! | `expires_at` (punishment, rank change) | `timestamptz` | 2000-01-01T00:00:00Z ..= 9999-12-31T23:59:59Z |
//! | uuids, enums, booleans | `uuid`, `text` with CHECK, `boolean` | the JSON shape already decides |
//!
//! Every btree over text stays far below PostgreSQL's ~2,700-byte entry limit even with 4-byte
//! characters at full length; the session `ip_hash` is ingest's own 64-character hex HMAC.

mod account_link;
mod action;
mod anticheat_flag;
mod appeal;
mod chat;
mod custom_event;
mod erasure;
mod heartbeat;
mod note;
mod properties;
mod punishment;
mod rank_change;
mod session;
#[cfg(test)]
mod tests;

pub use account_link::{AccountLink, LinkAction};
pub use action::{
    ACK_OUTCOMES, Action, ActionAck, ActionMember, ActionPunishment, ActionRevoke, ActionType,
    DASHBOARD_SOURCE, MAX_ACK_DETAIL, MAX_ACTION_REASON, MAX_MEMBER_NAME,
};
pub use anticheat_flag::AnticheatFlag;
pub use appeal::{Appeal, AppealStep, MAX_APPEAL_TEXT, MIN_APPEAL_MESSAGE};
pub use chat::{ChatEntry, ChatEntryType};
pub use custom_event::{CustomEvent, MAX_PROPERTIES_BYTES, MAX_PROPERTIES_DEPTH, json_depth};
pub use erasure::{ERASED_BY_ADMIN, PlayerErasure};
pub use heartbeat::{Heartbeat, ServerRole, UnknownServerRole};
pub use note::{
    MAX_AUTHOR_NAME, MAX_EVIDENCE_LINK, MAX_EVIDENCE_LINKS, MAX_NOTE_TEXT, Note, NoteAuthor,
    is_web_link,
};
pub use punishment::{Punishment, PunishmentAction, PunishmentType};
pub use rank_change::{DEFAULT_STAFF_GROUPS, RankAction, RankChange};
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
    /// Staff notes on players (written by the dashboard, never by a plugin).
    Note,
    /// A player's erasure (written by query-api, never by a plugin).
    Erasure,
    /// A punishment issued or revoked on the dashboard (written by query-api, never by a
    /// plugin).
    Action,
    /// A server's answer to a dashboard action.
    ActionAck,
    /// A player's appeal of a punishment, or a step staff took on it (written by query-api,
    /// never by a plugin).
    Appeal,
}

impl RecordKind {
    /// Every kind, in a fixed order.
    pub const ALL: [RecordKind; 13] = [
        RecordKind::Heartbeat,
        RecordKind::Chat,
        RecordKind::Punishment,
        RecordKind::AnticheatFlag,
        RecordKind::Session,
        RecordKind::RankChange,
        RecordKind::AccountLink,
        RecordKind::Custom,
        RecordKind::Note,
        RecordKind::Erasure,
        RecordKind::Action,
        RecordKind::ActionAck,
        RecordKind::Appeal,
    ];

    /// The kinds a game-server plugin records of its server (every kind but the dashboard's
    /// [`RecordKind::Note`], [`RecordKind::Erasure`], [`RecordKind::Action`] and
    /// [`RecordKind::Appeal`], and the
    /// plugin's [`RecordKind::ActionAck`], its answer to an action), in the order of
    /// [`RecordKind::ALL`].
    pub const PLUGIN: [RecordKind; 8] = [
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
            RecordKind::Note => "note",
            RecordKind::Erasure => "erasure",
            RecordKind::Action => "action",
            RecordKind::ActionAck => "action_ack",
            RecordKind::Appeal => "appeal",
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
