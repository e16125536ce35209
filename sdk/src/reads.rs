//! The shapes of the dashboard reads (contract §7) and the events API (contract §8).
//!
//! Optional fields default when absent, and unknown fields are ignored, so a newer service that
//! adds fields does not break an older client.

use crate::records::{PunishmentType, ServerRole};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

/// `GET /api/players/{uuid}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlayerProfile {
    /// The player's UUID.
    pub uuid: Uuid,
    /// Latest known name.
    #[serde(default)]
    pub username: Option<String>,
    /// First record seen.
    pub first_seen: DateTime<Utc>,
    /// Latest record seen.
    pub last_seen: DateTime<Utc>,
    /// In an open session on an online server.
    pub is_online: bool,
    /// Where the player is, when online.
    #[serde(default)]
    pub current_server_id: Option<Uuid>,
    /// Current permission group.
    #[serde(default)]
    pub rank: Option<String>,
    /// Whether the player counts as staff.
    pub is_staff: bool,
    /// Seconds played, all servers.
    pub total_playtime: i64,
    /// The linked chat-platform account.
    #[serde(default)]
    pub linked_account: Option<LinkedAccount>,
    /// Newest first, at most 100.
    #[serde(default)]
    pub joins: Vec<Join>,
    /// Newest first, at most 10.
    #[serde(default)]
    pub recent_punishments: Vec<PunishmentItem>,
    /// Newest first, at most 10.
    #[serde(default)]
    pub recent_anticheat_flags: Vec<FlagItem>,
}

/// A player's linked chat-platform account.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkedAccount {
    /// e.g. "discord".
    pub platform: String,
    /// The player's id there.
    #[serde(default)]
    pub external_id: Option<String>,
    /// The player's name there.
    #[serde(default)]
    pub external_name: Option<String>,
    /// When it was linked.
    #[serde(default)]
    pub linked_at: Option<DateTime<Utc>>,
}

/// One session on a server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Join {
    /// The server.
    pub server_id: Uuid,
    /// Its display name.
    #[serde(default)]
    pub server_name: Option<String>,
    /// When the player joined.
    pub joined_at: DateTime<Utc>,
    /// When they left; null while the session is open.
    #[serde(default)]
    pub left_at: Option<DateTime<Utc>>,
}

/// One punishment in a player's history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PunishmentItem {
    /// The punishment record's id.
    pub id: Uuid,
    /// `ban`, `mute`, `kick` or `warning`.
    #[serde(rename = "type")]
    pub punishment_type: PunishmentType,
    /// Why.
    #[serde(default)]
    pub reason: Option<String>,
    /// Who issued it; null for the console.
    #[serde(default)]
    pub staff_uuid: Option<Uuid>,
    /// Their name.
    #[serde(default)]
    pub staff_username: Option<String>,
    /// Where.
    #[serde(default)]
    pub server_id: Option<Uuid>,
    /// That server's name.
    #[serde(default)]
    pub server_name: Option<String>,
    /// When it was issued.
    pub issued_at: DateTime<Utc>,
    /// When it ends; null for permanent.
    #[serde(default)]
    pub expires_at: Option<DateTime<Utc>>,
    /// Not revoked and not expired.
    pub is_active: bool,
    /// When it was revoked.
    #[serde(default)]
    pub revoked_at: Option<DateTime<Utc>>,
    /// Who revoked it.
    #[serde(default)]
    pub revoked_by: Option<Uuid>,
    /// Why it was revoked.
    #[serde(default)]
    pub revoke_reason: Option<String>,
    /// Server group, or "global".
    #[serde(default)]
    pub scope: Option<String>,
    /// The punishment plugin.
    #[serde(default)]
    pub source_plugin: Option<String>,
}

/// One anti-cheat flag in a player's history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlagItem {
    /// The flag record's id.
    pub id: Uuid,
    /// The check, e.g. "Reach".
    pub check_name: String,
    /// The check's variant.
    #[serde(default)]
    pub check_type: Option<String>,
    /// Violation level.
    pub violation_level: f64,
    /// Free-text detail.
    #[serde(default)]
    pub detail: Option<String>,
    /// The anti-cheat plugin.
    #[serde(default)]
    pub source_plugin: Option<String>,
    /// Whether the check is experimental.
    #[serde(default)]
    pub is_experimental: bool,
    /// Where.
    pub server_id: Uuid,
    /// When it fired.
    pub flagged_at: DateTime<Utc>,
}

/// One chat message or command in a player's chat log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatLogEntry {
    /// The chat record's id.
    pub id: Uuid,
    /// `chat` or `command`.
    pub entry_type: crate::records::ChatEntryType,
    /// The text.
    pub message: String,
    /// The channel.
    #[serde(default)]
    pub channel: Option<String>,
    /// Where.
    pub server_id: Uuid,
    /// When.
    pub sent_at: DateTime<Utc>,
}

/// One page of a history list, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Page<T> {
    /// The items.
    pub items: Vec<T>,
    /// Pass as `cursor` for the next page; null at the end.
    #[serde(default)]
    pub next_cursor: Option<String>,
}

/// A list that is not paged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct List<T> {
    /// The items.
    pub items: Vec<T>,
}

/// One server's current status (`GET /api/servers`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerStatus {
    /// The server's UUID.
    pub id: Uuid,
    /// Display name.
    #[serde(default)]
    pub name: Option<String>,
    /// A game server or a proxy, as its last heartbeat said.
    #[serde(default)]
    pub role: Option<ServerRole>,
    /// Heartbeats arriving and the last one said online.
    pub is_online: bool,
    /// Last TPS.
    #[serde(default)]
    pub tps: Option<f64>,
    /// Players online.
    #[serde(default)]
    pub player_count: Option<i64>,
    /// Capacity.
    #[serde(default)]
    pub max_players: Option<i64>,
    /// Software and version.
    #[serde(default)]
    pub version: Option<String>,
    /// The last heartbeat's time.
    pub last_heartbeat_at: DateTime<Utc>,
}

/// One staff member (`GET /api/staff`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StaffMember {
    /// The player's UUID.
    pub uuid: Uuid,
    /// Latest known name.
    #[serde(default)]
    pub username: Option<String>,
    /// Current group.
    #[serde(default)]
    pub rank: Option<String>,
    /// Online now.
    pub is_online: bool,
    /// Where, when online.
    #[serde(default)]
    pub current_server_id: Option<Uuid>,
    /// Latest record seen.
    #[serde(default)]
    pub last_seen: Option<DateTime<Utc>>,
}

/// One event of the timeline (`GET /api/v1/events`, and each SSE `data`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventItem {
    /// The event's id.
    pub id: Uuid,
    /// Position in the log; `Last-Event-ID` of the stream.
    pub seq: i64,
    /// The event's name (custom, or internal such as `session_join`).
    pub name: String,
    /// The player, when there is one.
    #[serde(default)]
    pub player_uuid: Option<Uuid>,
    /// The properties, as given.
    #[serde(default)]
    pub properties: Value,
    /// When it happened.
    pub occurred_at: DateTime<Utc>,
    /// When the service received it.
    pub received_at: DateTime<Utc>,
}

/// How funnel steps must follow each other.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FunnelOrder {
    /// In order; other events may come between.
    #[default]
    Sequential,
    /// In order, with no other custom event between.
    Strict,
    /// Any order after the first step.
    Any,
}

/// `POST /api/v1/funnels`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunnelRequest {
    /// 2..=10 event names; the first is a custom event.
    pub steps: Vec<String>,
    /// Conversion window, seconds (the service's default when absent: 7 days).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_seconds: Option<i64>,
    /// Entries from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<DateTime<Utc>>,
    /// Entries to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<DateTime<Utc>>,
    /// Step order.
    #[serde(default)]
    pub order: FunnelOrder,
}

/// One funnel step's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunnelStep {
    /// The event name.
    pub name: String,
    /// Distinct players who reached it.
    pub players: i64,
    /// Share of the first step's players.
    pub conversion_from_start: f64,
    /// Share of the previous step's players.
    pub conversion_from_previous: f64,
    /// Median time from the previous step.
    #[serde(default)]
    pub median_seconds_from_previous: Option<f64>,
}

/// A funnel's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunnelResult {
    /// One entry per step, in order.
    pub steps: Vec<FunnelStep>,
}
