//! An account's privacy policy: how long each kind of data is kept, and which custom-event
//! properties are personal. Stored in the privacy accounts bucket (`policy.<account>`), where
//! ingest (which seals the personal properties) and the projector (which applies retention)
//! both read it; the settings page and `PUT /api/admin/accounts/{id}/privacy` write it.

use super::RetentionKind;
use crate::validation::{FieldError, FieldErrors};
use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The longest retention that can be set, in days (100 years); unset means forever.
pub const MAX_RETENTION_DAYS: u32 = 36_500;
/// Custom-event properties an account can mark personal at most.
pub const MAX_PERSONAL_PROPERTIES: usize = 64;

/// Days each kind of data is kept; `null` (or absent) keeps it forever.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RetentionDays {
    /// Chat messages and commands.
    #[serde(default, deserialize_with = "crate::whole_number::deserialize")]
    #[schema(minimum = 1, maximum = 36500)]
    pub chat: Option<u32>,
    /// Sessions' IP hashes (the sessions themselves follow `sessions`).
    #[serde(default, deserialize_with = "crate::whole_number::deserialize")]
    #[schema(minimum = 1, maximum = 36500)]
    pub ip_hashes: Option<u32>,
    /// Join/quit sessions.
    #[serde(default, deserialize_with = "crate::whole_number::deserialize")]
    #[schema(minimum = 1, maximum = 36500)]
    pub sessions: Option<u32>,
    /// Custom events.
    #[serde(default, deserialize_with = "crate::whole_number::deserialize")]
    #[schema(minimum = 1, maximum = 36500)]
    pub custom_events: Option<u32>,
    /// Anti-cheat flags.
    #[serde(default, deserialize_with = "crate::whole_number::deserialize")]
    #[schema(minimum = 1, maximum = 36500)]
    pub anticheat_flags: Option<u32>,
}

impl RetentionDays {
    /// The days set for `kind` (`None`: forever).
    pub fn days(&self, kind: RetentionKind) -> Option<u32> {
        match kind {
            RetentionKind::Chat => self.chat,
            RetentionKind::IpHashes => self.ip_hashes,
            RetentionKind::Sessions => self.sessions,
            RetentionKind::CustomEvents => self.custom_events,
            RetentionKind::AnticheatFlags => self.anticheat_flags,
        }
    }

    /// Sets the days for `kind`.
    pub fn set(&mut self, kind: RetentionKind, days: Option<u32>) {
        let slot = match kind {
            RetentionKind::Chat => &mut self.chat,
            RetentionKind::IpHashes => &mut self.ip_hashes,
            RetentionKind::Sessions => &mut self.sessions,
            RetentionKind::CustomEvents => &mut self.custom_events,
            RetentionKind::AnticheatFlags => &mut self.anticheat_flags,
        };
        *slot = days;
    }
}

/// An account's privacy policy.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PrivacyPolicy {
    /// How long each kind of data is kept.
    #[serde(default)]
    pub retention: RetentionDays,
    /// Top-level custom-event property names whose values are personal (sealed in the log
    /// under the custom-event retention, erased with the player), e.g. `["email", "ip"]`.
    #[serde(default)]
    #[schema(max_items = 64)]
    pub personal_properties: Vec<String>,
}

impl PrivacyPolicy {
    /// The time before which data of `kind` is past retention, at `now`; `None`: kept forever.
    pub fn cutoff(&self, kind: RetentionKind, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        self.retention
            .days(kind)
            .map(|days| now - Duration::days(i64::from(days)))
    }

    /// True when data of `kind` from `at` is past retention at `now`.
    pub fn expired(&self, kind: RetentionKind, at: DateTime<Utc>, now: DateTime<Utc>) -> bool {
        self.cutoff(kind, now).is_some_and(|cutoff| at < cutoff)
    }

    /// True when the top-level custom-event property `name` is personal.
    pub fn is_personal_property(&self, name: &str) -> bool {
        self.personal_properties.iter().any(|p| p == name)
    }

    /// The policy's rules: days in 1..=36500, at most 64 property names of 1..=64 characters
    /// without NUL, no name twice.
    pub fn validate(&self) -> Result<(), Vec<FieldError>> {
        let mut errors = FieldErrors::new();
        for kind in RetentionKind::ALL {
            if let Some(days) = self.retention.days(kind)
                && !(1..=MAX_RETENTION_DAYS).contains(&days)
            {
                errors.push(
                    &format!("retention.{}", kind.as_str()),
                    "out_of_range",
                    format!("must be 1..={MAX_RETENTION_DAYS} days, or null to keep forever"),
                );
            }
        }
        if self.personal_properties.len() > MAX_PERSONAL_PROPERTIES {
            errors.push(
                "personal_properties",
                "too_many",
                format!("at most {MAX_PERSONAL_PROPERTIES} property names"),
            );
        }
        for (i, name) in self.personal_properties.iter().enumerate() {
            let field = format!("personal_properties[{i}]");
            errors.text(&field, Some(name), 1, 64);
            if self.personal_properties[..i].contains(name) {
                errors.push(&field, "duplicate", "names each property once");
            }
        }
        errors.into_result()
    }
}
