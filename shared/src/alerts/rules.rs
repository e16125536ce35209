//! What an alert rule watches for: its kind and parameters ([`RuleSpec`]).
//!
//! The admin API accepts a rule as `{"kind", "destinations", "name"?, "enabled"?, ...the
//! kind's fields}`; `alert_rules.spec` stores the [`RuleSpec`] JSON (with `kind`, without
//! `destinations`), and the notifier reads it back with the same type. Unknown fields are
//! refused, so a misspelt parameter is an error rather than a rule that silently matches all.

use crate::event_name::EventName;
use crate::records::PunishmentType;
use crate::validation::{FieldError, FieldErrors};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

/// Fewest and most flags an `anticheat_threshold` rule may count.
pub const ANTICHEAT_FLAGS: std::ops::RangeInclusive<u32> = 2..=1000;
/// Shortest and longest `anticheat_threshold` window, in seconds.
pub const ANTICHEAT_WINDOW_SECONDS: std::ops::RangeInclusive<u32> = 1..=3600;
/// Shortest and longest `tps_low` duration, in minutes.
pub const TPS_LOW_MINUTES: std::ops::RangeInclusive<u32> = 1..=1440;
/// The highest `tps_low` threshold: Minecraft's full speed.
pub const TPS_MAX: f64 = 20.0;

/// Which way a rank change must cross the account's staff groups to match.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StaffDirection {
    /// Into a staff group from a group that is not one.
    Into,
    /// Out of a staff group into a group that is not one.
    OutOf,
    /// Either way.
    #[default]
    Both,
}

/// A rule's kind and parameters, as the API accepts and `alert_rules.spec` stores them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum RuleSpec {
    /// A punishment was issued (`punishment.issued`).
    PunishmentIssued {
        /// Only these types; empty matches every type.
        #[serde(default)]
        punishment_types: Vec<PunishmentType>,
    },
    /// A punishment was revoked (`punishment.revoked`).
    PunishmentRevoked {
        /// Only these types; empty matches every type.
        #[serde(default)]
        punishment_types: Vec<PunishmentType>,
    },
    /// `flags` anti-cheat flags for one player within `window_seconds`
    /// (`anticheat.threshold`); once per burst: not again for that player until a full
    /// window passes without reaching `flags`.
    AnticheatThreshold {
        /// How many flags (2 to 1000).
        #[serde(deserialize_with = "crate::whole_number::deserialize")]
        flags: u32,
        /// Within how many seconds (1 to 3600).
        #[serde(deserialize_with = "crate::whole_number::deserialize")]
        window_seconds: u32,
        /// Count only this check's flags (its `check_name`); absent counts every check.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        check: Option<String>,
    },
    /// A server stopped sending heartbeats for 3 of the account's sync intervals, or sent one
    /// with `online: false` (`server.offline`).
    ServerOffline {
        /// Only this server; absent watches every server of the account.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        server_id: Option<Uuid>,
    },
    /// The first heartbeat from a server after it was offline (`server.online`).
    ServerOnline {
        /// Only this server; absent watches every server of the account.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        server_id: Option<Uuid>,
    },
    /// TPS stayed below `below` for `minutes` of heartbeats (`server.tps_low`), then came
    /// back to `below` or above (`server.tps_recovered`).
    TpsLow {
        /// The threshold (above 0, at most 20).
        below: f64,
        /// For how many minutes (1 to 1440).
        #[serde(deserialize_with = "crate::whole_number::deserialize")]
        minutes: u32,
        /// Only this server; absent watches every server of the account.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        server_id: Option<Uuid>,
    },
    /// A player who shares an IP hash with a currently banned player joined
    /// (`player.banned_alt_joined`).
    BannedAltJoined {},
    /// A rank change into or out of one of the account's staff groups
    /// (`rank.staff_joined` / `rank.staff_left`).
    StaffRankChange {
        /// Which crossings match (default both).
        #[serde(default)]
        direction: StaffDirection,
    },
    /// A custom event with this name (`event.custom`).
    CustomEvent {
        /// The event's name (`^[a-z0-9_]{1,64}$`, no reserved prefix).
        event_name: String,
    },
}

/// The kinds of rule, as stored in `alert_rules.kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleKind {
    /// [`RuleSpec::PunishmentIssued`].
    PunishmentIssued,
    /// [`RuleSpec::PunishmentRevoked`].
    PunishmentRevoked,
    /// [`RuleSpec::AnticheatThreshold`].
    AnticheatThreshold,
    /// [`RuleSpec::ServerOffline`].
    ServerOffline,
    /// [`RuleSpec::ServerOnline`].
    ServerOnline,
    /// [`RuleSpec::TpsLow`].
    TpsLow,
    /// [`RuleSpec::BannedAltJoined`].
    BannedAltJoined,
    /// [`RuleSpec::StaffRankChange`].
    StaffRankChange,
    /// [`RuleSpec::CustomEvent`].
    CustomEvent,
}

impl RuleKind {
    /// Every kind, in the order the dashboard lists them.
    pub const ALL: [RuleKind; 9] = [
        RuleKind::PunishmentIssued,
        RuleKind::PunishmentRevoked,
        RuleKind::AnticheatThreshold,
        RuleKind::ServerOffline,
        RuleKind::ServerOnline,
        RuleKind::TpsLow,
        RuleKind::BannedAltJoined,
        RuleKind::StaffRankChange,
        RuleKind::CustomEvent,
    ];

    /// The kind as text (`punishment_issued`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            RuleKind::PunishmentIssued => "punishment_issued",
            RuleKind::PunishmentRevoked => "punishment_revoked",
            RuleKind::AnticheatThreshold => "anticheat_threshold",
            RuleKind::ServerOffline => "server_offline",
            RuleKind::ServerOnline => "server_online",
            RuleKind::TpsLow => "tps_low",
            RuleKind::BannedAltJoined => "banned_alt_joined",
            RuleKind::StaffRankChange => "staff_rank_change",
            RuleKind::CustomEvent => "custom_event",
        }
    }

    /// The kind named `text`, if there is one.
    pub fn parse(text: &str) -> Option<RuleKind> {
        RuleKind::ALL.into_iter().find(|k| k.as_str() == text)
    }
}

impl std::fmt::Display for RuleKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl RuleSpec {
    /// The rule's kind.
    pub fn rule_kind(&self) -> RuleKind {
        match self {
            RuleSpec::PunishmentIssued { .. } => RuleKind::PunishmentIssued,
            RuleSpec::PunishmentRevoked { .. } => RuleKind::PunishmentRevoked,
            RuleSpec::AnticheatThreshold { .. } => RuleKind::AnticheatThreshold,
            RuleSpec::ServerOffline { .. } => RuleKind::ServerOffline,
            RuleSpec::ServerOnline { .. } => RuleKind::ServerOnline,
            RuleSpec::TpsLow { .. } => RuleKind::TpsLow,
            RuleSpec::BannedAltJoined {} => RuleKind::BannedAltJoined,
            RuleSpec::StaffRankChange { .. } => RuleKind::StaffRankChange,
            RuleSpec::CustomEvent { .. } => RuleKind::CustomEvent,
        }
    }

    /// The rule's kind as text, as stored in `alert_rules.kind`.
    pub fn kind(&self) -> &'static str {
        self.rule_kind().as_str()
    }

    /// The server a server rule is limited to, if any.
    pub fn server_id(&self) -> Option<Uuid> {
        match self {
            RuleSpec::ServerOffline { server_id }
            | RuleSpec::ServerOnline { server_id }
            | RuleSpec::TpsLow { server_id, .. } => *server_id,
            _ => None,
        }
    }

    /// The spec as stored in `alert_rules.spec` (with `kind`).
    pub fn to_value(&self) -> Value {
        // Cannot fail: a RuleSpec holds only strings, numbers and UUIDs under string keys
        // (serde_json even writes a non-finite float, which validate refuses, as null).
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Checks the parameters' ranges (serde has checked their types).
    pub fn validate(&self) -> Result<(), Vec<FieldError>> {
        let mut errors = FieldErrors::new();
        match self {
            RuleSpec::PunishmentIssued { punishment_types }
            | RuleSpec::PunishmentRevoked { punishment_types } => {
                let mut seen = Vec::new();
                for t in punishment_types {
                    if seen.contains(t) {
                        errors.push(
                            "punishment_types",
                            "duplicate",
                            format!("lists '{}' more than once", t.as_str()),
                        );
                        break;
                    }
                    seen.push(*t);
                }
            }
            RuleSpec::AnticheatThreshold {
                flags,
                window_seconds,
                check,
            } => {
                range(&mut errors, "flags", *flags, &ANTICHEAT_FLAGS);
                range(
                    &mut errors,
                    "window_seconds",
                    *window_seconds,
                    &ANTICHEAT_WINDOW_SECONDS,
                );
                // The same limits as an anti-cheat flag's `check_name`, so any check can be named.
                errors.text("check", check.as_deref(), 1, 128);
            }
            RuleSpec::TpsLow { below, minutes, .. } => {
                if !below.is_finite() || *below <= 0.0 || *below > TPS_MAX {
                    errors.push(
                        "below",
                        "out_of_range",
                        format!("must be above 0 and at most {TPS_MAX}"),
                    );
                }
                range(&mut errors, "minutes", *minutes, &TPS_LOW_MINUTES);
            }
            RuleSpec::CustomEvent { event_name } => {
                if let Err(e) = EventName::parse(event_name) {
                    errors.push("event_name", e.code(), e.to_string());
                }
            }
            RuleSpec::ServerOffline { .. }
            | RuleSpec::ServerOnline { .. }
            | RuleSpec::BannedAltJoined {}
            | RuleSpec::StaffRankChange { .. } => {}
        }
        errors.into_result()
    }

    /// Parses and validates a rule from JSON holding `kind` and the kind's fields only (the
    /// API's `destinations`, `name` and `enabled` taken out), with one field error per problem:
    /// `kind` `required` or `unknown_kind`, `unknown_field`, `invalid_type`, or a range code.
    pub fn parse(value: &Value) -> Result<RuleSpec, Vec<FieldError>> {
        let error = |field: &str, code: &str, message: String| {
            vec![FieldError {
                field: field.to_owned(),
                code: code.to_owned(),
                message,
            }]
        };
        let Some(object) = value.as_object() else {
            return Err(error(
                "",
                "invalid_type",
                "a rule must be a JSON object".into(),
            ));
        };
        match object.get("kind") {
            None | Some(Value::Null) => {
                return Err(error("kind", "required", kinds_message("kind is required")));
            }
            Some(Value::String(kind)) if RuleKind::parse(kind).is_some() => {}
            Some(_) => {
                return Err(error("kind", "unknown_kind", kinds_message("unknown kind")));
            }
        }
        let spec: RuleSpec =
            serde_json::from_value(value.clone()).map_err(|e| serde_error(&e.to_string()))?;
        spec.validate()?;
        Ok(spec)
    }
}

/// "`lead`; one of: punishment_issued, ...".
fn kinds_message(lead: &str) -> String {
    let kinds: Vec<&str> = RuleKind::ALL.iter().map(|k| k.as_str()).collect();
    format!("{lead}; one of: {}", kinds.join(", "))
}

/// Turns serde's message into a field error: serde_json names an unknown or missing field in
/// backquotes, which is the field to report.
fn serde_error(message: &str) -> Vec<FieldError> {
    let quoted = message.split('`').nth(1).unwrap_or_default().to_owned();
    let (field, code) = if message.starts_with("unknown field") {
        (quoted, "unknown_field")
    } else if message.starts_with("missing field") {
        (quoted, "required")
    } else {
        (String::new(), "invalid_type")
    };
    // serde_json appends " at line 1 column 2" to parse errors; from_value has no position.
    vec![FieldError {
        field,
        code: code.to_owned(),
        message: message.to_owned(),
    }]
}

/// Records `out_of_range` unless `value` lies in `allowed`.
fn range(
    errors: &mut FieldErrors,
    field: &str,
    value: u32,
    allowed: &std::ops::RangeInclusive<u32>,
) {
    if !allowed.contains(&value) {
        errors.push(
            field,
            "out_of_range",
            format!(
                "must be an integer from {} to {}",
                allowed.start(),
                allowed.end()
            ),
        );
    }
}

#[cfg(test)]
#[path = "rules_tests.rs"]
mod tests;
