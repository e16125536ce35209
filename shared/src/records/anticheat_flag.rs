use super::{IpHasher, PluginRecord, RecordKind};
use crate::envelope::{Logged, RecordBatch};
use crate::validation::{FieldError, FieldErrors};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

/// One anti-cheat flag (`POST /api/plugin/anticheat-flags`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AnticheatFlag {
    /// UUID of the server it happened on.
    pub server_id: Uuid,
    /// The flagged player.
    pub player_uuid: Uuid,
    /// The player's name at the time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 1, max_length = 64, pattern = "^[^\\x00]*$")]
    pub player_name: Option<String>,
    /// The check that fired, e.g. "Reach".
    #[schema(min_length = 1, max_length = 128, pattern = "^[^\\x00]*$")]
    pub check_name: String,
    /// The check's variant, e.g. "A".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 1, max_length = 64, pattern = "^[^\\x00]*$")]
    pub check_type: Option<String>,
    /// Violation level, >= 0.
    #[schema(minimum = 0, maximum = 1e12)]
    pub violation_level: f64,
    /// Free-text detail from the anti-cheat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 0, max_length = 4096, pattern = "^[^\\x00]*$")]
    pub detail: Option<String>,
    /// The anti-cheat plugin, e.g. "grim".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 1, max_length = 64, pattern = "^[^\\x00]*$")]
    pub source_plugin: Option<String>,
    /// Whether the check is experimental.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_experimental: Option<bool>,
    /// The player's ping, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0, maximum = 1e7)]
    pub ping_ms: Option<f64>,
    /// Server TPS at the time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0, maximum = 1000)]
    pub tps: Option<f64>,
    /// When it fired; the time of receipt when omitted.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::date_time::deserialize"
    )]
    pub flagged_at: Option<DateTime<Utc>>,
}

impl PluginRecord for AnticheatFlag {
    const KIND: RecordKind = RecordKind::AnticheatFlag;

    fn validate(&self, now: DateTime<Utc>) -> Result<(), Vec<FieldError>> {
        let mut errors = FieldErrors::new();
        errors.text("player_name", self.player_name.as_deref(), 1, 64);
        errors.text("check_name", Some(&self.check_name), 1, 128);
        errors.text("check_type", self.check_type.as_deref(), 1, 64);
        errors.number("violation_level", Some(self.violation_level), 0.0, 1e12);
        errors.text("detail", self.detail.as_deref(), 0, 4096);
        errors.text("source_plugin", self.source_plugin.as_deref(), 1, 64);
        errors.number("ping_ms", self.ping_ms, 0.0, 1e7);
        errors.number("tps", self.tps, 0.0, 1000.0);
        errors.record_time("flagged_at", self.flagged_at, now);
        errors.into_result()
    }

    fn normalize(&mut self, received_at: DateTime<Utc>, _: &IpHasher) {
        self.flagged_at.get_or_insert(received_at);
    }

    fn server_id(&self) -> Option<Uuid> {
        Some(self.server_id)
    }

    fn into_batch(records: Vec<Logged<Self>>) -> RecordBatch {
        RecordBatch::AnticheatFlag(records)
    }
}
