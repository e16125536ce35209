use super::{IpHasher, PluginRecord, RecordKind};
use crate::envelope::{Logged, RecordBatch};
use crate::validation::{FieldError, FieldErrors};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

/// The largest value of a PostgreSQL `integer` column.
const MAX_INT4: i64 = i32::MAX as i64;

/// What sends the heartbeat: a game server, or a proxy in front of the network's servers.
///
/// A proxy's players are the same people as its backends' players, so the network's
/// player counts leave proxies out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ServerRole {
    /// A game server (the default).
    #[default]
    Server,
    /// A proxy (Velocity, BungeeCord): its players are counted by the servers behind it.
    Proxy,
}

impl ServerRole {
    /// The role as text (`server`, `proxy`), as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            ServerRole::Server => "server",
            ServerRole::Proxy => "proxy",
        }
    }
}

/// A stored role that is neither `server` nor `proxy`.
#[derive(Debug, thiserror::Error)]
#[error("unknown server role {0:?}")]
pub struct UnknownServerRole(String);

impl TryFrom<String> for ServerRole {
    type Error = UnknownServerRole;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        match text.as_str() {
            "server" => Ok(ServerRole::Server),
            "proxy" => Ok(ServerRole::Proxy),
            _ => Err(UnknownServerRole(text)),
        }
    }
}

/// Server status, sent every sync interval (`POST /api/plugin/heartbeat`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Heartbeat {
    /// UUID of the sending server.
    pub server_id: Uuid,
    /// Ticks per second, 0..=1000.
    #[schema(minimum = 0, maximum = 1000)]
    pub tps: f64,
    /// Players online now, 0..=2147483647.
    #[schema(minimum = 0, maximum = 2147483647)]
    #[serde(deserialize_with = "crate::whole_number::deserialize")]
    pub player_count: i64,
    /// Player capacity, 0..=2147483647.
    #[schema(minimum = 0, maximum = 2147483647)]
    #[serde(deserialize_with = "crate::whole_number::deserialize")]
    pub max_players: i64,
    /// When the heartbeat was taken; the time of receipt when omitted.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::date_time::deserialize"
    )]
    pub timestamp: Option<DateTime<Utc>>,
    /// Display name of the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 1, max_length = 128, pattern = "^[^\\x00]*$")]
    pub name: Option<String>,
    /// Server software and version, e.g. "Paper 1.21.4".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 1, max_length = 128, pattern = "^[^\\x00]*$")]
    pub version: Option<String>,
    /// Memory in use, MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0, maximum = 1e9)]
    pub memory_used_mb: Option<f64>,
    /// Memory limit, MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0, maximum = 1e9)]
    pub memory_max_mb: Option<f64>,
    /// False on a graceful shutdown; true when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub online: Option<bool>,
    /// `server` (a game server) or `proxy`; a game server when omitted or null.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<ServerRole>,
}

impl PluginRecord for Heartbeat {
    const KIND: RecordKind = RecordKind::Heartbeat;

    fn validate(&self, now: DateTime<Utc>) -> Result<(), Vec<FieldError>> {
        let mut errors = FieldErrors::new();
        errors.number("tps", Some(self.tps), 0.0, 1000.0);
        // Both are stored in `integer` columns.
        errors.integer_range("player_count", Some(self.player_count), 0, MAX_INT4);
        errors.integer_range("max_players", Some(self.max_players), 0, MAX_INT4);
        errors.record_time("timestamp", self.timestamp, now);
        errors.text("name", self.name.as_deref(), 1, 128);
        errors.text("version", self.version.as_deref(), 1, 128);
        errors.number("memory_used_mb", self.memory_used_mb, 0.0, 1e9);
        errors.number("memory_max_mb", self.memory_max_mb, 0.0, 1e9);
        errors.into_result()
    }

    fn normalize(&mut self, received_at: DateTime<Utc>, _: &IpHasher) {
        self.timestamp.get_or_insert(received_at);
    }

    fn server_id(&self) -> Option<Uuid> {
        Some(self.server_id)
    }

    fn into_batch(records: Vec<Logged<Self>>) -> RecordBatch {
        RecordBatch::Heartbeat(records)
    }
}
