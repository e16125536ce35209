//! The moderation and player records: punishments, flags, sessions, ranks, account links.

use super::{LinkAction, PluginRecord, PunishmentAction, PunishmentType, RankAction, SessionEvent};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// A punishment issued or revoked (`POST /api/plugin/punishments`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Punishment {
    /// Client id (UUIDv7); filled in by the client when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Uuid>,
    /// UUID of the server it happened on.
    pub server_id: Uuid,
    /// The punished player.
    pub player_uuid: Uuid,
    /// The player's name at the time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub player_name: Option<String>,
    /// `ban`, `mute`, `kick` or `warning`.
    #[serde(rename = "type")]
    pub punishment_type: PunishmentType,
    /// `issue` (the default when absent) or `revoke`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<PunishmentAction>,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The staff member who acted; absent for the console.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub staff_uuid: Option<Uuid>,
    /// The staff member's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub staff_name: Option<String>,
    /// When it was issued (or revoked); the time of receipt when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issued_at: Option<DateTime<Utc>>,
    /// When it ends; absent means permanent. Ignored for kicks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<DateTime<Utc>>,
    /// Whether the punishment targets the player's IP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip_based: Option<bool>,
    /// Server group, or "global".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// The punishment plugin, e.g. "litebans".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_plugin: Option<String>,
    /// That plugin's own id for the punishment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_id: Option<String>,
    /// For a revoke: the id of the punishment record to end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub punishment_id: Option<Uuid>,
    /// For a revoke: why it was revoked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoke_reason: Option<String>,
}
plugin_record!(Punishment, "/api/plugin/punishments");

impl Punishment {
    /// A punishment being issued.
    pub fn issue(server_id: Uuid, player_uuid: Uuid, punishment_type: PunishmentType) -> Self {
        Punishment {
            id: None,
            server_id,
            player_uuid,
            player_name: None,
            punishment_type,
            action: None,
            reason: None,
            staff_uuid: None,
            staff_name: None,
            issued_at: None,
            expires_at: None,
            ip_based: None,
            scope: None,
            source_plugin: None,
            external_id: None,
            punishment_id: None,
            revoke_reason: None,
        }
    }

    /// A revoke of the punishment `source_plugin` knows as `external_id`.
    pub fn revoke(
        server_id: Uuid,
        player_uuid: Uuid,
        punishment_type: PunishmentType,
        source_plugin: impl Into<String>,
        external_id: impl Into<String>,
    ) -> Self {
        Punishment {
            action: Some(PunishmentAction::Revoke),
            source_plugin: Some(source_plugin.into()),
            external_id: Some(external_id.into()),
            ..Punishment::issue(server_id, player_uuid, punishment_type)
        }
    }
}

/// One anti-cheat flag (`POST /api/plugin/anticheat-flags`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnticheatFlag {
    /// Client id (UUIDv7); filled in by the client when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Uuid>,
    /// UUID of the server it happened on.
    pub server_id: Uuid,
    /// The flagged player.
    pub player_uuid: Uuid,
    /// The player's name at the time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub player_name: Option<String>,
    /// The check that fired, e.g. "Reach".
    pub check_name: String,
    /// The check's variant, e.g. "A".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_type: Option<String>,
    /// Violation level, >= 0.
    pub violation_level: f64,
    /// Free-text detail from the anti-cheat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The anti-cheat plugin, e.g. "grim".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_plugin: Option<String>,
    /// Whether the check is experimental.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_experimental: Option<bool>,
    /// The player's ping, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ping_ms: Option<f64>,
    /// Server TPS at the time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tps: Option<f64>,
    /// When it fired; the time of receipt when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flagged_at: Option<DateTime<Utc>>,
}
plugin_record!(AnticheatFlag, "/api/plugin/anticheat-flags");

impl AnticheatFlag {
    /// A flag with the required fields.
    pub fn new(
        server_id: Uuid,
        player_uuid: Uuid,
        check_name: impl Into<String>,
        violation_level: f64,
    ) -> Self {
        AnticheatFlag {
            id: None,
            server_id,
            player_uuid,
            player_name: None,
            check_name: check_name.into(),
            check_type: None,
            violation_level,
            detail: None,
            source_plugin: None,
            is_experimental: None,
            ping_ms: None,
            tps: None,
            flagged_at: None,
        }
    }
}

/// A player joining or leaving a server (`POST /api/plugin/sessions`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    /// Client id (UUIDv7); filled in by the client when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Uuid>,
    /// UUID of the server.
    pub server_id: Uuid,
    /// The player.
    pub player_uuid: Uuid,
    /// The player's name now.
    pub player_name: String,
    /// `join` or `quit`.
    pub event: SessionEvent,
    /// When; the time of receipt when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<DateTime<Utc>>,
    /// The player's client version, e.g. "1.21.4".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_version: Option<String>,
    /// The player's IP; the service keeps only a keyed hash of it (for alt detection).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip: Option<String>,
}
plugin_record!(Session, "/api/plugin/sessions");

impl Session {
    /// A join or quit with the required fields.
    pub fn new(
        server_id: Uuid,
        player_uuid: Uuid,
        player_name: impl Into<String>,
        event: SessionEvent,
    ) -> Self {
        Session {
            id: None,
            server_id,
            player_uuid,
            player_name: player_name.into(),
            event,
            at: None,
            client_version: None,
            ip: None,
        }
    }
}

/// A permission-group change (`POST /api/plugin/rank-changes`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankChange {
    /// Client id (UUIDv7); filled in by the client when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Uuid>,
    /// The player.
    pub player_uuid: Uuid,
    /// The player's name at the time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub player_name: Option<String>,
    /// `add`, `remove` or `set`.
    pub action: RankAction,
    /// The group.
    pub group: String,
    /// The group before the change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_group: Option<String>,
    /// The server it applies to; absent means network-wide.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_id: Option<Uuid>,
    /// Who changed it; absent for the console.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub staff_uuid: Option<Uuid>,
    /// That staff member's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub staff_name: Option<String>,
    /// When a temporary group ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<DateTime<Utc>>,
    /// When it changed; the time of receipt when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed_at: Option<DateTime<Utc>>,
}
plugin_record!(RankChange, "/api/plugin/rank-changes");

impl RankChange {
    /// A rank change with the required fields.
    pub fn new(player_uuid: Uuid, action: RankAction, group: impl Into<String>) -> Self {
        RankChange {
            id: None,
            player_uuid,
            player_name: None,
            action,
            group: group.into(),
            previous_group: None,
            server_id: None,
            staff_uuid: None,
            staff_name: None,
            expires_at: None,
            changed_at: None,
        }
    }
}

/// A link between a player and a chat-platform account (`POST /api/plugin/account-links`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AccountLink {
    /// Client id (UUIDv7); filled in by the client when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Uuid>,
    /// The player.
    pub player_uuid: Uuid,
    /// The platform, e.g. "discord".
    pub platform: String,
    /// The player's id on that platform.
    pub external_id: String,
    /// The player's name on that platform.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_name: Option<String>,
    /// `link` or `unlink`.
    pub action: LinkAction,
    /// When; the time of receipt when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<DateTime<Utc>>,
}
plugin_record!(AccountLink, "/api/plugin/account-links");

impl AccountLink {
    /// A link or unlink with the required fields.
    pub fn new(
        player_uuid: Uuid,
        platform: impl Into<String>,
        external_id: impl Into<String>,
        action: LinkAction,
    ) -> Self {
        AccountLink {
            id: None,
            player_uuid,
            platform: platform.into(),
            external_id: external_id.into(),
            external_name: None,
            action,
            at: None,
        }
    }
}
