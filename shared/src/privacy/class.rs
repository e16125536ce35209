//! What a personal field is (its class) and how long an account keeps each kind of data.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The class of a personal field: which keys seal it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FieldClass {
    /// Names, reasons, links and notes: kept until the player is erased.
    Identity,
    /// Chat message and command text: kept for the account's chat retention.
    Chat,
    /// A session's IP hash: kept for the account's IP-hash retention.
    IpHash,
    /// Custom-event property values (all but those the account keeps in clear): kept for the
    /// custom-event retention.
    EventProperties,
}

impl FieldClass {
    /// Every class.
    pub const ALL: [FieldClass; 4] = [
        FieldClass::Identity,
        FieldClass::Chat,
        FieldClass::IpHash,
        FieldClass::EventProperties,
    ];

    /// The byte that names the class inside a sealed value.
    pub(crate) fn code(self) -> u8 {
        match self {
            FieldClass::Identity => 1,
            FieldClass::Chat => 2,
            FieldClass::IpHash => 3,
            FieldClass::EventProperties => 4,
        }
    }

    /// The class a sealed value's byte names.
    pub(crate) fn from_code(code: u8) -> Option<FieldClass> {
        FieldClass::ALL.into_iter().find(|c| c.code() == code)
    }

    /// The class's token in key names and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            FieldClass::Identity => "identity",
            FieldClass::Chat => "chat",
            FieldClass::IpHash => "ip_hash",
            FieldClass::EventProperties => "event_properties",
        }
    }

    /// The class named `token` ([`as_str`](FieldClass::as_str)).
    pub fn parse(token: &str) -> Option<FieldClass> {
        FieldClass::ALL.into_iter().find(|c| c.as_str() == token)
    }

    /// The retention kind whose period keys also seal this class; identity has none.
    pub fn retention(self) -> Option<RetentionKind> {
        match self {
            FieldClass::Identity => None,
            FieldClass::Chat => Some(RetentionKind::Chat),
            FieldClass::IpHash => Some(RetentionKind::IpHashes),
            FieldClass::EventProperties => Some(RetentionKind::CustomEvents),
        }
    }
}

/// A kind of data an account can keep for a limited number of days.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RetentionKind {
    /// Chat messages and commands (rows of the chat log, and their text in the event log).
    Chat,
    /// The IP hashes of sessions (blanked; the sessions stay).
    IpHashes,
    /// Join/quit sessions.
    Sessions,
    /// Custom events (rows of the Events page, and their sealed properties in the event log).
    CustomEvents,
    /// Anti-cheat flags.
    AnticheatFlags,
}

impl RetentionKind {
    /// Every kind, in the settings page's order.
    pub const ALL: [RetentionKind; 5] = [
        RetentionKind::Chat,
        RetentionKind::IpHashes,
        RetentionKind::Sessions,
        RetentionKind::CustomEvents,
        RetentionKind::AnticheatFlags,
    ];

    /// The kind's JSON name.
    pub fn as_str(self) -> &'static str {
        match self {
            RetentionKind::Chat => "chat",
            RetentionKind::IpHashes => "ip_hashes",
            RetentionKind::Sessions => "sessions",
            RetentionKind::CustomEvents => "custom_events",
            RetentionKind::AnticheatFlags => "anticheat_flags",
        }
    }

    /// The class of personal fields sealed under this kind's period keys, if any.
    pub fn class(self) -> Option<FieldClass> {
        FieldClass::ALL
            .into_iter()
            .find(|c| c.retention() == Some(self))
    }
}

const SECONDS_PER_DAY: i64 = 86_400;

/// The UTC day of `at`, as days since 1970-01-01 (what sealed values and period keys name).
pub fn day_of(at: DateTime<Utc>) -> u32 {
    let days = at.timestamp().div_euclid(SECONDS_PER_DAY);
    days.clamp(0, i64::from(u32::MAX)) as u32
}

/// The first instant of `day` ([`day_of`]).
pub fn day_start(day: u32) -> DateTime<Utc> {
    DateTime::from_timestamp(i64::from(day) * SECONDS_PER_DAY, 0).unwrap_or(DateTime::UNIX_EPOCH)
}
