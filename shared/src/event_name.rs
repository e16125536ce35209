//! Event names: `^[a-z0-9_]{1,64}$`. A custom event a client sends must not use a reserved
//! prefix ([`EventName::parse`]); a name to look for on the timeline may, since the internal
//! events carry them ([`EventName::parse_lookup`]).

use std::fmt;

/// Prefixes that belong to the events the service records itself (contract §6).
pub const RESERVED_PREFIXES: [&str; 5] = ["session_", "punish_", "chat_", "rank_", "block_"];

/// Longest allowed event name, in characters.
pub const MAX_EVENT_NAME_LEN: usize = 64;

/// A validated custom event name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EventName(String);

/// Why a custom event name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EventNameError {
    /// The name does not match `^[a-z0-9_]{1,64}$`.
    #[error("event name must be 1 to 64 characters of lowercase letters, digits and underscores")]
    Invalid,
    /// The name starts with a prefix the service records itself.
    #[error("event name '{name}' uses the reserved prefix '{prefix}'")]
    ReservedPrefix {
        /// The refused name.
        name: String,
        /// The reserved prefix it starts with.
        prefix: &'static str,
    },
}

impl EventNameError {
    /// The stable problem-details code for this error.
    pub fn code(&self) -> &'static str {
        match self {
            EventNameError::Invalid => "invalid_event_name",
            EventNameError::ReservedPrefix { .. } => "reserved_prefix",
        }
    }
}

/// True when `name` matches `^[a-z0-9_]{1,64}$` (the reserved prefixes are not checked).
fn is_well_formed(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_EVENT_NAME_LEN
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// The reserved prefix `name` starts with, if any.
pub fn reserved_prefix(name: &str) -> Option<&'static str> {
    RESERVED_PREFIXES.into_iter().find(|p| name.starts_with(p))
}

impl EventName {
    /// Parses a name sent by a client for a custom event.
    pub fn parse(name: &str) -> Result<EventName, EventNameError> {
        if !is_well_formed(name) {
            return Err(EventNameError::Invalid);
        }
        if let Some(prefix) = reserved_prefix(name) {
            return Err(EventNameError::ReservedPrefix {
                name: name.to_owned(),
                prefix,
            });
        }
        Ok(EventName(name.to_owned()))
    }

    /// Parses a name to look for among recorded events (a list filter, a funnel's later
    /// step): well-formed, and a reserved prefix is allowed, because internal events carry them.
    pub fn parse_lookup(name: &str) -> Result<EventName, EventNameError> {
        if is_well_formed(name) {
            Ok(EventName(name.to_owned()))
        } else {
            Err(EventNameError::Invalid)
        }
    }

    /// The name as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<EventName> for String {
    fn from(name: EventName) -> String {
        name.0
    }
}

impl fmt::Display for EventName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_lowercase_digits_and_underscores() {
        for ok in [
            "a",
            "level_up",
            "crate_opened_2",
            "_leading",
            "0",
            "sessionx_ok",
        ] {
            assert!(EventName::parse(ok).is_ok(), "{ok} should be valid");
        }
    }

    #[test]
    fn length_edges() {
        assert!(EventName::parse(&"a".repeat(64)).is_ok());
        assert_eq!(
            EventName::parse(&"a".repeat(65)),
            Err(EventNameError::Invalid)
        );
        assert_eq!(EventName::parse(""), Err(EventNameError::Invalid));
    }

    #[test]
    fn rejects_other_characters() {
        for bad in [
            "Level_up",
            "level-up",
            "level up",
            "niveau_é",
            "événement",
            "a.b",
            "ÄÖ",
            "a\n",
        ] {
            assert_eq!(EventName::parse(bad), Err(EventNameError::Invalid), "{bad}");
        }
    }

    #[test]
    fn rejects_every_reserved_prefix() {
        for prefix in RESERVED_PREFIXES {
            let name = format!("{prefix}spam");
            let err = EventName::parse(&name).unwrap_err();
            assert_eq!(err.code(), "reserved_prefix");
            assert_eq!(
                err.to_string(),
                format!("event name '{name}' uses the reserved prefix '{prefix}'")
            );
        }
        // The bare prefix is reserved too.
        assert!(EventName::parse("chat_").is_err());
    }

    #[test]
    fn names_that_only_resemble_a_prefix_are_fine() {
        for ok in [
            "sessionx_ok",
            "session",
            "punish",
            "chatter_joined",
            "ranks_viewed",
            "blocks_mined",
            "my_chat_event",
        ] {
            assert!(EventName::parse(ok).is_ok(), "{ok} should be valid");
        }
    }

    #[test]
    fn lookups_accept_reserved_prefixes_but_not_malformed_names() {
        for prefix in RESERVED_PREFIXES {
            let name = format!("{prefix}started");
            assert_eq!(
                EventName::parse_lookup(&name).map(|n| n.to_string()),
                Ok(name)
            );
        }
        assert!(EventName::parse_lookup("level_up").is_ok());
        for bad in ["", "Chat_x", "a-b", &"a".repeat(65)] {
            assert_eq!(
                EventName::parse_lookup(bad),
                Err(EventNameError::Invalid),
                "{bad}"
            );
        }
    }

    #[test]
    fn malformed_wins_over_reserved() {
        assert_eq!(EventName::parse("Chat_x"), Err(EventNameError::Invalid));
    }
}
