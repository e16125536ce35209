//! A player's appeal of a punishment, and each step staff take on it: written by query-api
//! (the public appeal form, proven by a signed link; the appeals inbox), never by a plugin.
//!
//! Every record of one appeal carries its id; the projector folds them in log order into one
//! `appeals` row whose status is the latest step. An accepted appeal names the `revoke` action
//! written with it, which lifts the punishment like any dashboard revoke.

use super::{ActionMember, MAX_MEMBER_NAME, RecordKind};
use crate::envelope::{Logged, RecordBatch};
use crate::validation::{FieldError, FieldErrors};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Longest appeal message and staff reply, in characters.
pub const MAX_APPEAL_TEXT: usize = 2000;
/// Shortest appeal message, in characters (a word or two is not an appeal).
pub const MIN_APPEAL_MESSAGE: usize = 10;

/// What a step of an appeal does; the appeal's status is its latest step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AppealStep {
    /// The player sent it (status `new`).
    Submitted,
    /// A member took it up (status `under_review`).
    UnderReview,
    /// A member accepted it (the punishment is revoked with it, when still in force).
    Accepted,
    /// A member denied it.
    Denied,
}

impl AppealStep {
    /// The appeal's status after this step: `new`, `under_review`, `accepted` or `denied`.
    pub fn status(self) -> &'static str {
        match self {
            AppealStep::Submitted => "new",
            AppealStep::UnderReview => "under_review",
            AppealStep::Accepted => "accepted",
            AppealStep::Denied => "denied",
        }
    }

    /// Whether this step closes the appeal.
    pub fn decides(self) -> bool {
        matches!(self, AppealStep::Accepted | AppealStep::Denied)
    }
}

/// One step of an appeal: the payload of an `appeal` log message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Appeal {
    /// The appeal's id (a UUID v7), the same on every step of it.
    pub id: Uuid,
    /// What this step does.
    pub step: AppealStep,
    /// The punishment appealed.
    pub punishment_id: Uuid,
    /// Its player.
    pub player_uuid: Uuid,
    /// The player's words (`submitted` only), 10..=2000 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Staff's words to the player (a decision), at most 2000 characters; shown at the
    /// appeal's link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply: Option<String>,
    /// The member who took the step (every step but `submitted`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<ActionMember>,
    /// The revoke action written with an accepted appeal (absent when the punishment had
    /// already ended).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoke_action: Option<Uuid>,
    /// When.
    pub at: DateTime<Utc>,
}

impl Appeal {
    /// The record kind appeals are logged under.
    pub const KIND: RecordKind = RecordKind::Appeal;

    /// The rules every stored step keeps; `now` is the time of writing (query-api) or of
    /// receipt (the projector, which skips a step that breaks them rather than stop on it).
    pub fn validate(&self, now: DateTime<Utc>) -> Result<(), Vec<FieldError>> {
        let mut errors = FieldErrors::new();
        match self.step {
            AppealStep::Submitted => {
                match self.message.as_deref() {
                    None => errors.push("message", "required", "write the appeal"),
                    Some(text) if text.trim().is_empty() => {
                        errors.push("message", "required", "write the appeal")
                    }
                    Some(text) => {
                        errors.text("message", Some(text), 1, MAX_APPEAL_TEXT);
                        if !text.contains('\0') && text.trim().chars().count() < MIN_APPEAL_MESSAGE
                        {
                            errors.push(
                                "message",
                                "too_short",
                                format!("at least {MIN_APPEAL_MESSAGE} characters"),
                            );
                        }
                    }
                }
                for (field, present) in [
                    ("reply", self.reply.is_some()),
                    ("by", self.by.is_some()),
                    ("revoke_action", self.revoke_action.is_some()),
                ] {
                    if present {
                        errors.push(field, "not_allowed", "a player's appeal has no staff part");
                    }
                }
            }
            step => {
                if self.message.is_some() {
                    errors.push(
                        "message",
                        "not_allowed",
                        "only the player writes the appeal",
                    );
                }
                errors.text("reply", self.reply.as_deref(), 0, MAX_APPEAL_TEXT);
                match &self.by {
                    Some(by) => errors.text("by.name", Some(&by.name), 1, MAX_MEMBER_NAME),
                    None => errors.push("by", "required", "name the member who acted"),
                }
                if self.revoke_action.is_some() && step != AppealStep::Accepted {
                    errors.push(
                        "revoke_action",
                        "not_allowed",
                        "only an accepted appeal revokes",
                    );
                }
            }
        }
        errors.record_time("at", Some(self.at), now);
        errors.into_result()
    }

    /// Wraps appeal steps into the log's tagged batch.
    pub fn into_batch(records: Vec<Logged<Appeal>>) -> RecordBatch {
        RecordBatch::Appeal(records)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn submitted(message: &str) -> Appeal {
        Appeal {
            id: Uuid::now_v7(),
            step: AppealStep::Submitted,
            punishment_id: Uuid::now_v7(),
            player_uuid: Uuid::new_v4(),
            message: Some(message.into()),
            reply: None,
            by: None,
            revoke_action: None,
            at: Utc::now(),
        }
    }

    fn codes(appeal: &Appeal) -> Vec<(String, String)> {
        appeal
            .validate(Utc::now())
            .err()
            .unwrap_or_default()
            .into_iter()
            .map(|e| (e.field, e.code))
            .collect()
    }

    #[test]
    fn a_player_writes_the_message_and_staff_write_the_rest() {
        let appeal = submitted("I was not using x-ray, here is my clip.");
        assert_eq!(codes(&appeal), []);
        let json = serde_json::to_value(&appeal).unwrap();
        assert_eq!(json["step"], "submitted");
        assert_eq!(serde_json::from_value::<Appeal>(json).unwrap(), appeal);

        let mut staff_in_player = appeal.clone();
        staff_in_player.reply = Some("ok".into());
        assert_eq!(
            codes(&staff_in_player),
            [("reply".into(), "not_allowed".into())]
        );

        let accepted = Appeal {
            step: AppealStep::Accepted,
            message: None,
            reply: Some("Fair enough, welcome back.".into()),
            by: Some(ActionMember {
                member_id: Uuid::nil(),
                name: "Mia".into(),
            }),
            revoke_action: Some(Uuid::now_v7()),
            ..appeal.clone()
        };
        assert_eq!(codes(&accepted), []);
        assert_eq!(accepted.step.status(), "accepted");

        let denied_with_revoke = Appeal {
            step: AppealStep::Denied,
            by: None,
            ..accepted
        };
        assert_eq!(
            codes(&denied_with_revoke),
            [
                ("by".into(), "required".into()),
                ("revoke_action".into(), "not_allowed".into())
            ]
        );
    }

    #[test]
    fn an_empty_short_or_long_message_is_refused() {
        assert_eq!(
            codes(&submitted("   ")),
            [("message".into(), "required".into())]
        );
        assert_eq!(
            codes(&submitted("sorry")),
            [("message".into(), "too_short".into())]
        );
        assert_eq!(codes(&submitted(&"é".repeat(MAX_APPEAL_TEXT))), []);
        assert_eq!(
            codes(&submitted(&"é".repeat(MAX_APPEAL_TEXT + 1))),
            [("message".into(), "invalid_length".into())]
        );
        assert_eq!(
            codes(&submitted("ten chars and a nul \u{0}")),
            [("message".into(), "invalid_characters".into())]
        );
    }
}
