use super::{IpHasher, PluginRecord, RecordKind};
use crate::envelope::{Logged, RecordBatch};
use crate::validation::{FieldError, FieldErrors};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

/// The four kinds of punishment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PunishmentType {
    /// Barred from joining.
    Ban,
    /// Barred from chatting.
    Mute,
    /// Removed from the server once.
    Kick,
    /// A recorded warning.
    Warning,
}

impl PunishmentType {
    /// The type as text (`ban`, `mute`, `kick`, `warning`).
    pub fn as_str(self) -> &'static str {
        match self {
            PunishmentType::Ban => "ban",
            PunishmentType::Mute => "mute",
            PunishmentType::Kick => "kick",
            PunishmentType::Warning => "warning",
        }
    }
}

/// Whether a punishment record issues a punishment or ends one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PunishmentAction {
    /// A new punishment.
    #[default]
    Issue,
    /// Ends the punishment named by `external_id` (with `source_plugin`) or `punishment_id`.
    Revoke,
}

/// A punishment issued or revoked (`POST /api/plugin/punishments`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Punishment {
    /// UUID of the server it happened on.
    pub server_id: Uuid,
    /// The punished player.
    pub player_uuid: Uuid,
    /// The player's name at the time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 1, max_length = 64, pattern = "^[^\\x00]*$")]
    pub player_name: Option<String>,
    /// `ban`, `mute`, `kick` or `warning`.
    #[serde(rename = "type")]
    pub punishment_type: PunishmentType,
    /// `issue` (default) or `revoke`.
    #[serde(default)]
    pub action: PunishmentAction,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 0, max_length = 2048, pattern = "^[^\\x00]*$")]
    pub reason: Option<String>,
    /// The staff member who acted; absent for the console.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub staff_uuid: Option<Uuid>,
    /// The staff member's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 1, max_length = 64, pattern = "^[^\\x00]*$")]
    pub staff_name: Option<String>,
    /// When it was issued (or revoked); the time of receipt when omitted.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::date_time::deserialize"
    )]
    pub issued_at: Option<DateTime<Utc>>,
    /// When it ends (at most 9999-12-31T23:59:59Z); absent or null means permanent. Ignored for
    /// kicks.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::date_time::deserialize"
    )]
    pub expires_at: Option<DateTime<Utc>>,
    /// Whether the punishment targets the player's IP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip_based: Option<bool>,
    /// Server group, or "global".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 1, max_length = 64, pattern = "^[^\\x00]*$")]
    pub scope: Option<String>,
    /// The punishment plugin, e.g. "litebans".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 1, max_length = 64, pattern = "^[^\\x00]*$")]
    pub source_plugin: Option<String>,
    /// That plugin's own id for the punishment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 1, max_length = 128, pattern = "^[^\\x00]*$")]
    pub external_id: Option<String>,
    /// For a revoke: the id of the punishment record to end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub punishment_id: Option<Uuid>,
    /// For a revoke: why it was revoked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 0, max_length = 2048, pattern = "^[^\\x00]*$")]
    pub revoke_reason: Option<String>,
}

impl PluginRecord for Punishment {
    const KIND: RecordKind = RecordKind::Punishment;

    fn validate(&self, now: DateTime<Utc>) -> Result<(), Vec<FieldError>> {
        let mut errors = FieldErrors::new();
        errors.text("player_name", self.player_name.as_deref(), 1, 64);
        errors.text("reason", self.reason.as_deref(), 0, 2048);
        errors.text("staff_name", self.staff_name.as_deref(), 1, 64);
        errors.text("scope", self.scope.as_deref(), 1, 64);
        errors.text("source_plugin", self.source_plugin.as_deref(), 1, 64);
        errors.text("external_id", self.external_id.as_deref(), 1, 128);
        errors.text("revoke_reason", self.revoke_reason.as_deref(), 0, 2048);
        errors.record_time("issued_at", self.issued_at, now);
        errors.expiry("expires_at", self.expires_at);
        if let (Some(issued), Some(expires)) = (self.issued_at, self.expires_at)
            && expires <= issued
        {
            errors.push("expires_at", "out_of_range", "must be after issued_at");
        }
        if self.action == PunishmentAction::Revoke
            && self.external_id.is_none()
            && self.punishment_id.is_none()
        {
            errors.push(
                "external_id",
                "required",
                "a revoke names the punishment by external_id (with source_plugin) or punishment_id",
            );
        }
        errors.into_result()
    }

    fn normalize(&mut self, received_at: DateTime<Utc>, _: &IpHasher) {
        self.issued_at.get_or_insert(received_at);
        if self.punishment_type == PunishmentType::Kick {
            self.expires_at = None;
        }
    }

    fn server_id(&self) -> Option<Uuid> {
        Some(self.server_id)
    }

    fn into_batch(records: Vec<Logged<Self>>) -> RecordBatch {
        RecordBatch::Punishment(records)
    }
}
