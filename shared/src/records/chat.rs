use super::{IpHasher, PluginRecord, RecordKind};
use crate::envelope::{Logged, RecordBatch};
use crate::validation::{FieldError, FieldErrors};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

/// Whether a chat entry is a message or a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChatEntryType {
    /// A chat message.
    Chat,
    /// A command the player ran.
    Command,
}

/// One chat message or command (`POST /api/plugin/chat`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ChatEntry {
    /// UUID of the server it was said on.
    pub server_id: Uuid,
    /// The speaker.
    pub player_uuid: Uuid,
    /// The speaker's name at the time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 1, max_length = 64, pattern = "^[^\\x00]*$")]
    pub player_name: Option<String>,
    /// `chat` or `command`.
    pub entry_type: ChatEntryType,
    /// The text, 1..=4096 characters.
    #[schema(min_length = 1, max_length = 4096, pattern = "^[^\\x00]*$")]
    pub message: String,
    /// Channel, e.g. "global" or "staff".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 1, max_length = 64, pattern = "^[^\\x00]*$")]
    pub channel: Option<String>,
    /// When it was sent; the time of receipt when omitted.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::date_time::deserialize"
    )]
    pub sent_at: Option<DateTime<Utc>>,
}

impl PluginRecord for ChatEntry {
    const KIND: RecordKind = RecordKind::Chat;

    fn validate(&self, now: DateTime<Utc>) -> Result<(), Vec<FieldError>> {
        let mut errors = FieldErrors::new();
        errors.text("player_name", self.player_name.as_deref(), 1, 64);
        errors.text("message", Some(&self.message), 1, 4096);
        errors.text("channel", self.channel.as_deref(), 1, 64);
        errors.record_time("sent_at", self.sent_at, now);
        errors.into_result()
    }

    fn normalize(&mut self, received_at: DateTime<Utc>, _: &IpHasher) {
        self.sent_at.get_or_insert(received_at);
    }

    fn server_id(&self) -> Option<Uuid> {
        Some(self.server_id)
    }

    fn into_batch(records: Vec<Logged<Self>>) -> RecordBatch {
        RecordBatch::Chat(records)
    }
}
