//! The records a plugin writes (contract §5), one struct per endpoint.
//!
//! Required fields are constructor arguments; optional fields are public and default to absent,
//! so a record is built with struct-update syntax:
//! `ChatEntry { channel: Some("global".into()), ..ChatEntry::new(server, player, ChatEntryType::Chat, "hi") }`.
//! Every record carries an optional client `id`; the client fills it with a UUIDv7 before the
//! first attempt, so a retry is recognised and stored once.

use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

/// A record kind the plugin API accepts, and the endpoint that takes it.
pub trait PluginRecord: Serialize + DeserializeOwned + Clone + Send + Sync + 'static {
    /// The endpoint path, e.g. `/api/plugin/chat`.
    const PATH: &'static str;

    /// The record's client id, if it has one.
    fn id(&self) -> Option<Uuid>;

    /// Sets the record's client id.
    fn set_id(&mut self, id: Uuid);

    /// Returns the record's id, giving it a fresh UUIDv7 first when it has none.
    fn ensure_id(&mut self) -> Uuid {
        match self.id() {
            Some(id) => id,
            None => {
                let id = Uuid::now_v7();
                self.set_id(id);
                id
            }
        }
    }
}

macro_rules! plugin_record {
    ($type:ty, $path:literal) => {
        impl PluginRecord for $type {
            const PATH: &'static str = $path;

            fn id(&self) -> Option<Uuid> {
                self.id
            }

            fn set_id(&mut self, id: Uuid) {
                self.id = Some(id);
            }
        }
    };
}

macro_rules! snake_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum $name { $($(#[$vmeta])* $variant),+ }
    };
}

snake_enum!(
    /// What sends a heartbeat: a game server, or a proxy in front of the network's servers.
    ServerRole {
        /// A game server (what a heartbeat without a role is).
        Server,
        /// A proxy (Velocity, BungeeCord): its players are not added to the network's count.
        Proxy,
    }
);
snake_enum!(
    /// Whether a chat entry is a message or a command.
    ChatEntryType {
        /// A chat message.
        Chat,
        /// A command the player ran.
        Command,
    }
);
snake_enum!(
    /// The four kinds of punishment.
    PunishmentType {
        /// Barred from joining.
        Ban,
        /// Barred from chatting.
        Mute,
        /// Removed from the server once.
        Kick,
        /// A recorded warning.
        Warning,
    }
);
snake_enum!(
    /// Whether a punishment record issues a punishment or ends one.
    PunishmentAction {
        /// A new punishment.
        Issue,
        /// Ends the punishment named by `external_id` (with `source_plugin`) or `punishment_id`.
        Revoke,
    }
);
snake_enum!(
    /// Join or quit.
    SessionEvent {
        /// The player joined the server.
        Join,
        /// The player left the server.
        Quit,
    }
);
snake_enum!(
    /// How a permission group changed.
    RankAction {
        /// The player gained `group`.
        Add,
        /// The player lost `group`.
        Remove,
        /// `group` replaced the player's groups.
        Set,
    }
);
snake_enum!(
    /// Linking or unlinking a chat-platform account.
    LinkAction {
        /// The player linked the account.
        Link,
        /// The player unlinked it.
        Unlink,
    }
);

/// Server status, sent every sync interval (`POST /api/plugin/heartbeat`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Heartbeat {
    /// Client id (UUIDv7); filled in by the client when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Uuid>,
    /// UUID of the sending server.
    pub server_id: Uuid,
    /// Ticks per second, 0..=1000.
    pub tps: f64,
    /// Players online now.
    pub player_count: i64,
    /// Player capacity.
    pub max_players: i64,
    /// When the heartbeat was taken; the time of receipt when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<DateTime<Utc>>,
    /// Display name of the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Server software and version, e.g. "Paper 1.21.4".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Memory in use, MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_used_mb: Option<f64>,
    /// Memory limit, MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_max_mb: Option<f64>,
    /// False on a graceful shutdown; true when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub online: Option<bool>,
    /// `Proxy` from a proxy; a game server when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<ServerRole>,
}
plugin_record!(Heartbeat, "/api/plugin/heartbeat");

impl Heartbeat {
    /// A heartbeat with the required fields.
    pub fn new(server_id: Uuid, tps: f64, player_count: i64, max_players: i64) -> Self {
        Heartbeat {
            id: None,
            server_id,
            tps,
            player_count,
            max_players,
            timestamp: None,
            name: None,
            version: None,
            memory_used_mb: None,
            memory_max_mb: None,
            online: None,
            role: None,
        }
    }
}

/// One chat message or command (`POST /api/plugin/chat`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatEntry {
    /// Client id (UUIDv7); filled in by the client when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Uuid>,
    /// UUID of the server it was said on.
    pub server_id: Uuid,
    /// The speaker.
    pub player_uuid: Uuid,
    /// The speaker's name at the time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub player_name: Option<String>,
    /// `chat` or `command`.
    pub entry_type: ChatEntryType,
    /// The text, 1..=4096 characters.
    pub message: String,
    /// Channel, e.g. "global" or "staff".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    /// When it was sent; the time of receipt when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent_at: Option<DateTime<Utc>>,
}
plugin_record!(ChatEntry, "/api/plugin/chat");

impl ChatEntry {
    /// A chat entry with the required fields.
    pub fn new(
        server_id: Uuid,
        player_uuid: Uuid,
        entry_type: ChatEntryType,
        message: impl Into<String>,
    ) -> Self {
        ChatEntry {
            id: None,
            server_id,
            player_uuid,
            player_name: None,
            entry_type,
            message: message.into(),
            channel: None,
            sent_at: None,
        }
    }
}

/// A custom event (`POST /api/v1/plugin/events`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CustomEvent {
    /// Client id (UUIDv7); filled in by the client or tracker when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Uuid>,
    /// The player the event is tied to.
    pub player_uuid: Uuid,
    /// `^[a-z0-9_]{1,64}$`, without a reserved prefix (`session_`, `chat_`, `punish_`, ...).
    pub name: String,
    /// A JSON object (any nesting up to 64 levels, at most 64 KiB); absent when null.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub properties: Value,
    /// When it happened; the time of receipt when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub occurred_at: Option<DateTime<Utc>>,
}
plugin_record!(CustomEvent, "/api/v1/plugin/events");

impl CustomEvent {
    /// An event with no properties.
    pub fn new(player_uuid: Uuid, name: impl Into<String>) -> Self {
        CustomEvent {
            id: None,
            player_uuid,
            name: name.into(),
            properties: Value::Null,
            occurred_at: None,
        }
    }

    /// The same event with `properties` (a JSON object).
    pub fn with_properties(mut self, properties: Value) -> Self {
        self.properties = properties;
        self
    }
}

mod moderation;
pub use moderation::{AccountLink, AnticheatFlag, Punishment, RankChange, Session};
