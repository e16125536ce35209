use super::{IpHasher, PluginRecord, RecordKind};
use crate::envelope::{Logged, RecordBatch};
use crate::validation::{FieldError, FieldErrors};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

/// Linking or unlinking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum LinkAction {
    /// The player linked the account.
    Link,
    /// The player unlinked it.
    Unlink,
}

/// A link between a player and a chat-platform account (`POST /api/plugin/account-links`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AccountLink {
    /// The player.
    pub player_uuid: Uuid,
    /// The platform, e.g. "discord".
    #[schema(min_length = 1, max_length = 32, pattern = "^[^\\x00]*$")]
    pub platform: String,
    /// The player's id on that platform.
    #[schema(min_length = 1, max_length = 128, pattern = "^[^\\x00]*$")]
    pub external_id: String,
    /// The player's name on that platform.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 1, max_length = 128, pattern = "^[^\\x00]*$")]
    pub external_name: Option<String>,
    /// `link` or `unlink`.
    pub action: LinkAction,
    /// When; the time of receipt when omitted.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::date_time::deserialize"
    )]
    pub at: Option<DateTime<Utc>>,
}

impl PluginRecord for AccountLink {
    const KIND: RecordKind = RecordKind::AccountLink;

    fn validate(&self, now: DateTime<Utc>) -> Result<(), Vec<FieldError>> {
        let mut errors = FieldErrors::new();
        errors.text("platform", Some(&self.platform), 1, 32);
        errors.text("external_id", Some(&self.external_id), 1, 128);
        errors.text("external_name", self.external_name.as_deref(), 1, 128);
        errors.record_time("at", self.at, now);
        errors.into_result()
    }

    fn normalize(&mut self, received_at: DateTime<Utc>, _: &IpHasher) {
        self.at.get_or_insert(received_at);
    }

    fn server_id(&self) -> Option<Uuid> {
        None
    }

    fn into_batch(records: Vec<Logged<Self>>) -> RecordBatch {
        RecordBatch::AccountLink(records)
    }
}
