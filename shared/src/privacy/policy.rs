//! An account's privacy policy: how long each kind of data is kept, and which custom-event
//! properties stay in clear in the event log (every other one is sealed with the player's
//! key). Stored in the privacy accounts bucket (`policy.<account>`), where ingest (which seals
//! the properties) and the projector (which applies retention) both read it; the settings page
//! and `PUT /api/admin/accounts/{id}/privacy` write it.
//!
//! A policy of the old shape named the *personal* properties (`personal_properties`) and left
//! the rest in clear, so an erasure depended on what an operator had thought of listing. Now
//! every property is personal unless listed in `clear_properties`. A stored policy of the old
//! shape still reads (its retention is kept); its personal list means nothing more than the
//! default, is not shown, and is dropped at the next save. Clients may still send the old
//! field (see [`PrivacyPolicy::personal_properties`]).

use super::RetentionKind;
use crate::validation::{FieldError, FieldErrors};
use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The longest retention that can be set, in days (100 years); unset means forever.
pub const MAX_RETENTION_DAYS: u32 = 36_500;
/// Custom-event properties an account can list at most (kept in clear, or the old personal
/// list).
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
    /// Top-level custom-event property names whose values stay in clear in the event log,
    /// e.g. `["item", "price"]`. Every other property value is sealed with the player's key
    /// (kept for the custom-event days, unreadable once the player is erased). Empty (the
    /// default): every property is sealed.
    #[serde(default)]
    #[schema(max_items = 64)]
    pub clear_properties: Vec<String>,
    /// Deprecated: earlier versions sealed only the properties listed here. Every property
    /// not in `clear_properties` is sealed now, so these names need no listing. Still
    /// accepted with its meaning: a name listed here is sealed even if `clear_properties`
    /// names it too (it is taken out of that list). Never stored nor returned.
    // `normalized` empties it before a policy is stored or answered.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(max_items = 64, deprecated)]
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

    /// True when the top-level custom-event property `name` is sealed in the log: every one
    /// the account does not keep in clear.
    pub fn is_personal_property(&self, name: &str) -> bool {
        !self.clear_properties.iter().any(|p| p == name)
    }

    /// The policy's rules: days in 1..=36500; in each list at most 64 property names of
    /// 1..=64 characters without NUL, no name twice.
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
        for (list, names) in [
            ("clear_properties", &self.clear_properties),
            ("personal_properties", &self.personal_properties),
        ] {
            if names.len() > MAX_PERSONAL_PROPERTIES {
                errors.push(
                    list,
                    "too_many",
                    format!("at most {MAX_PERSONAL_PROPERTIES} property names"),
                );
            }
            for (i, name) in names.iter().enumerate() {
                let field = format!("{list}[{i}]");
                errors.text(&field, Some(name), 1, 64);
                if names[..i].contains(name) {
                    errors.push(&field, "duplicate", "names each property once");
                }
            }
        }
        errors.into_result()
    }

    /// The policy as it is stored and returned: the old personal list applied (its names
    /// taken out of the clear list) and dropped, since the default seals the rest.
    pub fn normalized(mut self) -> PrivacyPolicy {
        let personal = std::mem::take(&mut self.personal_properties);
        self.clear_properties
            .retain(|name| !personal.contains(name));
        self
    }
}
