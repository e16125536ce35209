use super::{IpHasher, PluginRecord, RecordKind};
use crate::envelope::{Logged, RecordBatch};
use crate::validation::{FieldError, FieldErrors};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

/// Permission groups that make a player staff when an account has not chosen its own
/// (`account_settings.staff_groups`): query-api's settings and the notifier's staff rule.
pub const DEFAULT_STAFF_GROUPS: [&str; 7] = [
    "owner",
    "admin",
    "administrator",
    "moderator",
    "mod",
    "helper",
    "staff",
];

/// How a permission group changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RankAction {
    /// The player gained `group`.
    Add,
    /// The player lost `group`.
    Remove,
    /// `group` replaced the player's groups.
    Set,
}

/// A permission-group change (`POST /api/plugin/rank-changes`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct RankChange {
    /// The player.
    pub player_uuid: Uuid,
    /// The player's name at the time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 1, max_length = 64, pattern = "^[^\\x00]*$")]
    pub player_name: Option<String>,
    /// `add`, `remove` or `set`.
    pub action: RankAction,
    /// The group.
    #[schema(min_length = 1, max_length = 64, pattern = "^[^\\x00]*$")]
    pub group: String,
    /// The group before the change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 1, max_length = 64, pattern = "^[^\\x00]*$")]
    pub previous_group: Option<String>,
    /// The server it applies to; absent means network-wide.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_id: Option<Uuid>,
    /// Who changed it; absent for the console.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub staff_uuid: Option<Uuid>,
    /// That staff member's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 1, max_length = 64, pattern = "^[^\\x00]*$")]
    pub staff_name: Option<String>,
    /// When a temporary group ends (2000-01-01T00:00:00Z..=9999-12-31T23:59:59Z).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::date_time::deserialize"
    )]
    pub expires_at: Option<DateTime<Utc>>,
    /// When it changed; the time of receipt when omitted.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::date_time::deserialize"
    )]
    pub changed_at: Option<DateTime<Utc>>,
}

impl PluginRecord for RankChange {
    const KIND: RecordKind = RecordKind::RankChange;

    fn validate(&self, now: DateTime<Utc>) -> Result<(), Vec<FieldError>> {
        let mut errors = FieldErrors::new();
        errors.text("player_name", self.player_name.as_deref(), 1, 64);
        errors.text("group", Some(&self.group), 1, 64);
        errors.text("previous_group", self.previous_group.as_deref(), 1, 64);
        errors.text("staff_name", self.staff_name.as_deref(), 1, 64);
        errors.record_time("changed_at", self.changed_at, now);
        errors.expiry("expires_at", self.expires_at);
        errors.into_result()
    }

    fn normalize(&mut self, received_at: DateTime<Utc>, _: &IpHasher) {
        self.changed_at.get_or_insert(received_at);
    }

    fn server_id(&self) -> Option<Uuid> {
        self.server_id
    }

    fn into_batch(records: Vec<Logged<Self>>) -> RecordBatch {
        RecordBatch::RankChange(records)
    }
}
