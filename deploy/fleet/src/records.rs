//! The JSON records of contract §5, as the plugin sends them.
//!
//! Every record carries a client `id` (UUIDv7) chosen when it is made, so a retry of the same
//! request is recognised as a duplicate and stored once.

use crate::world::{Player, Server, World};
use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Map, Value, json};
use shared::records::RecordKind;
use uuid::Uuid;

/// The plugin endpoint that takes records of `kind`; none for staff notes and erasures, which
/// only query-api writes.
pub fn endpoint(kind: RecordKind) -> Option<&'static str> {
    Some(match kind {
        RecordKind::Heartbeat => "/api/plugin/heartbeat",
        RecordKind::Chat => "/api/plugin/chat",
        RecordKind::Punishment => "/api/plugin/punishments",
        RecordKind::AnticheatFlag => "/api/plugin/anticheat-flags",
        RecordKind::Session => "/api/plugin/sessions",
        RecordKind::RankChange => "/api/plugin/rank-changes",
        RecordKind::AccountLink => "/api/plugin/account-links",
        RecordKind::Custom => "/api/v1/plugin/events",
        RecordKind::ActionAck => "/api/plugin/actions/acks",
        RecordKind::Note | RecordKind::Erasure | RecordKind::Action | RecordKind::Appeal => {
            return None;
        }
    })
}

/// An RFC 3339 UTC timestamp with millisecond precision.
pub fn timestamp(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// Adds the client id and drops absent (null) optional fields.
fn record(fields: Value) -> Value {
    let mut out = Map::new();
    out.insert("id".to_owned(), json!(Uuid::now_v7()));
    if let Value::Object(fields) = fields {
        out.extend(fields.into_iter().filter(|(_, v)| !v.is_null()));
    }
    Value::Object(out)
}

/// A server's status at one sync.
#[derive(Debug, Clone, Copy)]
pub struct Status {
    /// Ticks per second.
    pub tps: f64,
    /// Players online on the server.
    pub player_count: usize,
    /// Memory in use, MiB.
    pub memory_used_mb: u32,
    /// False on a graceful shutdown.
    pub online: bool,
}

/// `POST /api/plugin/heartbeat`.
pub fn heartbeat(server: &Server, status: Status, at: DateTime<Utc>) -> Value {
    record(json!({
        "server_id": server.id,
        "tps": (status.tps * 100.0).round() / 100.0,
        "player_count": status.player_count,
        "max_players": server.max_players,
        "timestamp": timestamp(at),
        "name": server.name,
        "version": crate::world::SERVER_VERSION,
        "memory_used_mb": status.memory_used_mb,
        "memory_max_mb": server.memory_max_mb,
        "online": status.online,
    }))
}

/// Whether a chat entry is a message or a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryType {
    /// A chat message.
    Chat,
    /// A command, with its leading slash.
    Command,
}

/// `POST /api/plugin/chat` (one entry of a batch).
pub fn chat(
    server: &Server,
    player: &Player,
    entry_type: EntryType,
    message: &str,
    channel: &str,
    at: DateTime<Utc>,
) -> Value {
    record(json!({
        "server_id": server.id,
        "player_uuid": player.uuid,
        "player_name": player.name,
        "entry_type": match entry_type { EntryType::Chat => "chat", EntryType::Command => "command" },
        "message": message,
        "channel": channel,
        "sent_at": timestamp(at),
    }))
}

/// `POST /api/plugin/sessions`: a join (with the address, for alt detection) or a quit.
pub fn session(server: &Server, player: &Player, join: bool, at: DateTime<Utc>) -> Value {
    record(json!({
        "server_id": server.id,
        "player_uuid": player.uuid,
        "player_name": player.name,
        "event": if join { "join" } else { "quit" },
        "at": timestamp(at),
        "client_version": player.client_version,
        "ip": join.then(|| player.ip.to_string()),
    }))
}

/// One anti-cheat flag.
#[derive(Debug, Clone)]
pub struct Flag {
    /// Check name, e.g. "Reach".
    pub check_name: &'static str,
    /// Check variant, e.g. "A".
    pub check_type: &'static str,
    /// Violation level.
    pub violation_level: f64,
    /// What the check saw.
    pub detail: String,
    /// "grim" or "vulcan".
    pub source_plugin: &'static str,
    /// Whether the check is experimental.
    pub is_experimental: bool,
    /// The player's ping.
    pub ping_ms: u32,
    /// The server's tps.
    pub tps: f64,
}

/// `POST /api/plugin/anticheat-flags`.
pub fn anticheat_flag(server: &Server, player: &Player, flag: &Flag, at: DateTime<Utc>) -> Value {
    record(json!({
        "server_id": server.id,
        "player_uuid": player.uuid,
        "player_name": player.name,
        "check_name": flag.check_name,
        "check_type": flag.check_type,
        "violation_level": (flag.violation_level * 10.0).round() / 10.0,
        "detail": flag.detail,
        "source_plugin": flag.source_plugin,
        "is_experimental": flag.is_experimental,
        "ping_ms": flag.ping_ms,
        "tps": (flag.tps * 100.0).round() / 100.0,
        "flagged_at": timestamp(at),
    }))
}

/// A punishment issued by staff (or the console), or the revoke of one.
#[derive(Debug, Clone)]
pub struct PunishmentRecord {
    /// Where it happened.
    pub server: usize,
    /// The punished player.
    pub player: usize,
    /// `ban`, `mute`, `kick` or `warning`.
    pub kind: &'static str,
    /// Why.
    pub reason: String,
    /// The acting staff member; `None` for the console.
    pub staff: Option<usize>,
    /// When it ends; `None` is permanent.
    pub expires_at: Option<DateTime<Utc>>,
    /// litebans' own id for the punishment.
    pub external_id: String,
}

/// The plugin that owns punishments.
pub const PUNISHMENT_PLUGIN: &str = "litebans";

/// `POST /api/plugin/punishments` with action `issue`.
pub fn punishment(world: &World, p: &PunishmentRecord, at: DateTime<Utc>) -> Value {
    let player = &world.players[p.player];
    let staff = p.staff.map(|i| &world.players[i]);
    record(json!({
        "server_id": world.servers[p.server].id,
        "player_uuid": player.uuid,
        "player_name": player.name,
        "type": p.kind,
        "action": "issue",
        "reason": p.reason,
        "staff_uuid": staff.map(|s| s.uuid),
        "staff_name": staff.map_or("Console", |s| s.name.as_str()),
        "issued_at": timestamp(at),
        "expires_at": p.expires_at.map(timestamp),
        "ip_based": false,
        "scope": "global",
        "source_plugin": PUNISHMENT_PLUGIN,
        "external_id": p.external_id,
    }))
}

/// `POST /api/plugin/punishments` with action `revoke`, naming `p` by its external id.
pub fn revoke(
    world: &World,
    p: &PunishmentRecord,
    by: Option<usize>,
    why: &str,
    at: DateTime<Utc>,
) -> Value {
    let player = &world.players[p.player];
    let staff = by.map(|i| &world.players[i]);
    record(json!({
        "server_id": world.servers[p.server].id,
        "player_uuid": player.uuid,
        "player_name": player.name,
        "type": p.kind,
        "action": "revoke",
        "staff_uuid": staff.map(|s| s.uuid),
        "staff_name": staff.map_or("Console", |s| s.name.as_str()),
        "issued_at": timestamp(at),
        "source_plugin": PUNISHMENT_PLUGIN,
        "external_id": p.external_id,
        "revoke_reason": why,
    }))
}

/// `POST /api/plugin/rank-changes`: network-wide (no server), by the console (a store purchase).
pub fn rank_change(
    player: &Player,
    action: &str,
    group: &str,
    previous_group: Option<&str>,
    expires_at: Option<DateTime<Utc>>,
    at: DateTime<Utc>,
) -> Value {
    record(json!({
        "player_uuid": player.uuid,
        "player_name": player.name,
        "action": action,
        "group": group,
        "previous_group": previous_group,
        "expires_at": expires_at.map(timestamp),
        "changed_at": timestamp(at),
    }))
}

/// `POST /api/plugin/account-links` for a Discord account.
pub fn account_link(player: &Player, discord_id: u64, link: bool, at: DateTime<Utc>) -> Value {
    record(json!({
        "player_uuid": player.uuid,
        "platform": "discord",
        "external_id": discord_id.to_string(),
        "external_name": player.name.to_lowercase(),
        "action": if link { "link" } else { "unlink" },
        "at": timestamp(at),
    }))
}

/// `POST /api/v1/plugin/events`.
pub fn custom_event(player: &Player, name: &str, properties: Value, at: DateTime<Utc>) -> Value {
    record(json!({
        "player_uuid": player.uuid,
        "name": name,
        "properties": properties,
        "occurred_at": timestamp(at),
    }))
}

#[cfg(test)]
#[path = "records_tests.rs"]
mod tests;
