//! A player's erasure: written by query-api after it destroyed the player's data
//! key, never by a plugin (ingest has no route for it). Logged like every other record, so the
//! projector scrubs the read models in the same transaction as its checkpoint, and a rebuild
//! replays the erasure at its place in the log.
//!
//! The record itself holds nothing personal (UUIDs, a time, "admin" or a team member's id), so
//! no field of it is sealed.

use super::RecordKind;
use crate::envelope::{Logged, RecordBatch};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Who erased a player when the admin key did (else a team member's id).
pub const ERASED_BY_ADMIN: &str = "admin";

/// A player erased: the payload of an `erasure` log message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerErasure {
    /// The player erased.
    pub player_uuid: Uuid,
    /// When the erasure was requested (after the player's key was destroyed).
    pub erased_at: DateTime<Utc>,
    /// [`ERASED_BY_ADMIN`], or the id of the team member who asked for it.
    pub by: String,
}

impl PlayerErasure {
    /// The record kind erasures are logged under.
    pub const KIND: RecordKind = RecordKind::Erasure;

    /// Wraps erasures into the log's tagged batch.
    pub fn into_batch(records: Vec<Logged<PlayerErasure>>) -> RecordBatch {
        RecordBatch::Erasure(records)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envelope::LogMessage;

    #[test]
    fn an_erasure_round_trips_through_the_log_with_its_kind() {
        let erasure = PlayerErasure {
            player_uuid: Uuid::now_v7(),
            erased_at: Utc::now(),
            by: ERASED_BY_ADMIN.into(),
        };
        let id = Uuid::now_v7();
        let message = LogMessage::new(
            Uuid::now_v7(),
            Utc::now(),
            PlayerErasure::into_batch(vec![Logged {
                id,
                record: erasure.clone(),
            }]),
        );
        let decoded = LogMessage::decode(&message.encode()).expect("decodes");
        assert_eq!(decoded, message);
        assert_eq!(decoded.kind(), RecordKind::Erasure);
        assert_eq!(decoded.kind().as_str(), "erasure");
        let envelopes = decoded.envelopes();
        assert_eq!(envelopes.len(), 1);
        assert_eq!(envelopes[0].id, id);
        assert_eq!(envelopes[0].server_id, None);
        // Nothing personal: opening or sealing has nothing to do.
        let mut batch = decoded.batch;
        assert!(batch.personal_fields().is_empty());
    }
}
