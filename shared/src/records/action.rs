//! A dashboard action: a punishment issued or revoked by a team member on the web, written by
//! query-api (never by a plugin), and its acknowledgement by each server that applied it.
//!
//! The projector applies an action to the punishments read model like a plugin's punishment;
//! ingest's action feed serves the account's actions to its plugins, which enforce them and
//! answer with an [`ActionAck`] each.

use super::{IpHasher, PluginRecord, PunishmentType, RecordKind};
use crate::envelope::{Logged, RecordBatch};
use crate::validation::{FieldError, FieldErrors};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

/// The `source_plugin` of a punishment issued on the dashboard.
pub const DASHBOARD_SOURCE: &str = "warden";
/// Longest reason, in characters (a punishment's).
pub const MAX_ACTION_REASON: usize = 2048;
/// Longest member name (a team member's display name is at most 100 characters).
pub const MAX_MEMBER_NAME: usize = 100;
/// Longest detail an acknowledgement carries.
pub const MAX_ACK_DETAIL: usize = 512;
/// What a server may answer for an action.
pub const ACK_OUTCOMES: [&str; 4] = ["applied", "not_online", "skipped", "failed"];

/// Whether an action issues a punishment or revokes one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ActionType {
    /// A new punishment (`punishment` holds it).
    Issue,
    /// The end of a punishment (`revoke` names it).
    Revoke,
}

/// The punishment an `issue` action makes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ActionPunishment {
    /// `ban`, `mute`, `kick` or `warning`.
    #[serde(rename = "type")]
    pub punishment_type: PunishmentType,
    /// The player.
    pub player_uuid: Uuid,
    /// The player's name as the dashboard knows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub player_name: Option<String>,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// When it ends; absent or null: permanent (always absent for kicks and warnings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<DateTime<Utc>>,
    /// `global`, or the server group it applies to (1..=64).
    pub scope: String,
}

/// The punishment a `revoke` action ends, with what a server needs to lift it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ActionRevoke {
    /// The punishment's id (for one issued on the dashboard: its action's id).
    pub punishment_id: Uuid,
    /// Its player.
    pub player_uuid: Uuid,
    /// Its type.
    #[serde(rename = "type")]
    pub punishment_type: PunishmentType,
    /// The plugin that issued it (`warden` for the dashboard), so a server whose punishment
    /// plugin owns it can lift it there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_plugin: Option<String>,
    /// That plugin's own id for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_id: Option<String>,
    /// Why it is lifted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The team member who acted, and the name they went by then.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ActionMember {
    /// The member's id.
    pub member_id: Uuid,
    /// Their display name at the time.
    pub name: String,
}

/// A dashboard action: the payload of an `action` log message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Action {
    /// The action's id (a UUID v7); for an issue, also the punishment's id.
    pub id: Uuid,
    /// `issue` or `revoke`.
    #[serde(rename = "type")]
    pub action_type: ActionType,
    /// The punishment, for an issue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub punishment: Option<ActionPunishment>,
    /// The punishment lifted, for a revoke.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoke: Option<ActionRevoke>,
    /// Who acted.
    pub by: ActionMember,
    /// When.
    pub at: DateTime<Utc>,
}

impl Action {
    /// The record kind actions are logged under.
    pub const KIND: RecordKind = RecordKind::Action;

    /// The player the action is about.
    pub fn player_uuid(&self) -> Uuid {
        match (&self.punishment, &self.revoke) {
            (Some(p), _) => p.player_uuid,
            (None, Some(r)) => r.player_uuid,
            (None, None) => Uuid::nil(),
        }
    }

    /// The rules every stored action keeps; `now` is the time of writing (query-api) or of
    /// receipt (the projector, which skips an action that breaks them rather than stop on it).
    pub fn validate(&self, now: DateTime<Utc>) -> Result<(), Vec<FieldError>> {
        let mut errors = FieldErrors::new();
        match (self.action_type, &self.punishment, &self.revoke) {
            (ActionType::Issue, Some(p), None) => {
                errors.text("punishment.player_name", p.player_name.as_deref(), 1, 64);
                errors.text(
                    "punishment.reason",
                    p.reason.as_deref(),
                    0,
                    MAX_ACTION_REASON,
                );
                errors.text("punishment.scope", Some(&p.scope), 1, 64);
                errors.expiry("punishment.expires_at", p.expires_at);
                let timed = matches!(
                    p.punishment_type,
                    PunishmentType::Ban | PunishmentType::Mute
                );
                match p.expires_at {
                    Some(_) if !timed => errors.push(
                        "punishment.expires_at",
                        "not_allowed",
                        "a kick or a warning has no end",
                    ),
                    Some(end) if end <= self.at => errors.push(
                        "punishment.expires_at",
                        "out_of_range",
                        "must be after the action's time",
                    ),
                    _ => {}
                }
            }
            (ActionType::Revoke, None, Some(r)) => {
                if r.punishment_type == PunishmentType::Kick {
                    errors.push("revoke.type", "not_allowed", "a kick cannot be revoked");
                }
                errors.text("revoke.source_plugin", r.source_plugin.as_deref(), 1, 64);
                errors.text("revoke.external_id", r.external_id.as_deref(), 1, 128);
                errors.text("revoke.reason", r.reason.as_deref(), 0, MAX_ACTION_REASON);
            }
            (ActionType::Issue, _, _) => errors.push(
                "punishment",
                "required",
                "an issue holds a punishment and no revoke",
            ),
            (ActionType::Revoke, _, _) => errors.push(
                "revoke",
                "required",
                "a revoke names the punishment it lifts and holds no punishment",
            ),
        }
        errors.text("by.name", Some(&self.by.name), 1, MAX_MEMBER_NAME);
        errors.record_time("at", Some(self.at), now);
        errors.into_result()
    }

    /// Wraps actions into the log's tagged batch.
    pub fn into_batch(records: Vec<Logged<Action>>) -> RecordBatch {
        RecordBatch::Action(records)
    }
}

/// A server's answer to an action (`POST /api/plugin/actions/acks`): applied, the player not
/// online, skipped (not this server's scope, or already applied) or failed, with a detail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ActionAck {
    /// The server that answers.
    pub server_id: Uuid,
    /// The action it answers for.
    pub action_id: Uuid,
    /// `applied`, `not_online`, `skipped` or `failed`.
    pub outcome: String,
    /// The server's words (at most 512 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// When the server acted; absent: the time of receipt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<DateTime<Utc>>,
}

impl PluginRecord for ActionAck {
    const KIND: RecordKind = RecordKind::ActionAck;

    fn validate(&self, now: DateTime<Utc>) -> Result<(), Vec<FieldError>> {
        let mut errors = FieldErrors::new();
        if !ACK_OUTCOMES.contains(&self.outcome.as_str()) {
            errors.push(
                "outcome",
                "invalid_value",
                "must be applied, not_online, skipped or failed",
            );
        }
        errors.text("detail", self.detail.as_deref(), 0, MAX_ACK_DETAIL);
        errors.record_time("at", self.at, now);
        errors.into_result()
    }

    fn normalize(&mut self, received_at: DateTime<Utc>, _ip_hasher: &IpHasher) {
        self.at.get_or_insert(received_at);
    }

    fn server_id(&self) -> Option<Uuid> {
        Some(self.server_id)
    }

    fn into_batch(records: Vec<Logged<Self>>) -> RecordBatch {
        RecordBatch::ActionAck(records)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Duration;

    fn member() -> ActionMember {
        ActionMember {
            member_id: Uuid::nil(),
            name: "Moderator Mo".into(),
        }
    }

    fn ban(expires_in: Option<Duration>) -> Action {
        let at = Utc::now();
        Action {
            id: Uuid::now_v7(),
            action_type: ActionType::Issue,
            punishment: Some(ActionPunishment {
                punishment_type: PunishmentType::Ban,
                player_uuid: Uuid::new_v4(),
                player_name: Some("Griefer".into()),
                reason: Some("x-ray".into()),
                expires_at: expires_in.map(|d| at + d),
                scope: "global".into(),
            }),
            revoke: None,
            by: member(),
            at,
        }
    }

    fn codes(action: &Action) -> Vec<(String, String)> {
        match action.validate(Utc::now()) {
            Ok(()) => Vec::new(),
            Err(errors) => errors.into_iter().map(|e| (e.field, e.code)).collect(),
        }
    }

    #[test]
    fn an_issue_and_a_revoke_keep_the_rules_and_read_back_as_written() {
        let issue = ban(Some(Duration::days(7)));
        assert_eq!(codes(&issue), []);
        let json = serde_json::to_value(&issue).unwrap();
        assert_eq!(json["type"], "issue");
        assert_eq!(json["punishment"]["type"], "ban");
        assert!(json.get("revoke").is_none());
        assert_eq!(serde_json::from_value::<Action>(json).unwrap(), issue);

        let revoke = Action {
            id: Uuid::now_v7(),
            action_type: ActionType::Revoke,
            punishment: None,
            revoke: Some(ActionRevoke {
                punishment_id: issue.id,
                player_uuid: issue.player_uuid(),
                punishment_type: PunishmentType::Ban,
                source_plugin: Some(DASHBOARD_SOURCE.into()),
                external_id: None,
                reason: Some("appeal accepted".into()),
            }),
            by: member(),
            at: Utc::now(),
        };
        assert_eq!(codes(&revoke), []);
        assert_eq!(revoke.player_uuid(), issue.player_uuid());
    }

    #[test]
    fn a_shape_that_mixes_issue_and_revoke_or_ends_badly_is_refused() {
        let mut mixed = ban(None);
        mixed.action_type = ActionType::Revoke;
        assert_eq!(codes(&mixed), [("revoke".into(), "required".into())]);

        let mut kick = ban(Some(Duration::days(1)));
        if let Some(p) = kick.punishment.as_mut() {
            p.punishment_type = PunishmentType::Kick;
        }
        assert_eq!(
            codes(&kick),
            [("punishment.expires_at".into(), "not_allowed".into())]
        );

        let past = ban(Some(Duration::seconds(-5)));
        assert_eq!(
            codes(&past),
            [("punishment.expires_at".into(), "out_of_range".into())]
        );

        let mut nameless = ban(None);
        nameless.by.name = String::new();
        if let Some(p) = nameless.punishment.as_mut() {
            p.scope = "x".repeat(65);
        }
        assert_eq!(
            codes(&nameless),
            [
                ("punishment.scope".into(), "invalid_length".into()),
                ("by.name".into(), "invalid_length".into()),
            ]
        );
    }

    #[test]
    fn an_ack_names_a_known_outcome_and_gets_the_time_of_receipt() {
        let now = Utc::now();
        let mut ack = ActionAck {
            server_id: Uuid::new_v4(),
            action_id: Uuid::now_v7(),
            outcome: "applied".into(),
            detail: None,
            at: None,
        };
        assert!(ack.validate(now).is_ok());
        ack.normalize(now, &IpHasher::new(b"k"));
        assert_eq!(ack.at, Some(now));
        ack.outcome = "done".into();
        let errors = ack.validate(now).unwrap_err();
        assert_eq!(errors[0].field, "outcome");
        assert_eq!(errors[0].code, "invalid_value");
    }
}
