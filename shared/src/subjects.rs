//! The subject scheme of the event log: `<prefix>.ev.<account>.<kind>[.<event name>]`.
//!
//! A reader filters by subject: one account (`gs.ev.<account>.>`), one kind across accounts
//! (`gs.ev.*.chat`), or one custom event name (`gs.ev.<account>.custom.level_up`).

use crate::records::RecordKind;
use uuid::Uuid;

/// Builds subjects under one prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subjects {
    prefix: String,
}

impl Subjects {
    /// Subjects under `prefix` (e.g. `gs`).
    pub fn new(prefix: impl Into<String>) -> Self {
        Self {
            prefix: prefix.into(),
        }
    }

    /// Every event subject: the stream's filter.
    pub fn all_events(&self) -> String {
        format!("{}.ev.>", self.prefix)
    }

    /// Every event of one account.
    pub fn account_events(&self, account: Uuid) -> String {
        format!("{}.ev.{account}.>", self.prefix)
    }

    /// Where services report when keys were last used (core NATS, not in the stream).
    pub fn key_usage(&self) -> String {
        format!("{}.keys.used", self.prefix)
    }

    /// The subject of a log message; `name` is the custom event name.
    pub fn for_records(&self, account: Uuid, kind: RecordKind, name: Option<&str>) -> String {
        match name {
            Some(name) => format!("{}.ev.{account}.{}.{name}", self.prefix, kind.as_str()),
            None => format!("{}.ev.{account}.{}", self.prefix, kind.as_str()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_carry_account_kind_and_name() {
        let s = Subjects::new("gs");
        let a = Uuid::nil();
        assert_eq!(
            s.for_records(a, RecordKind::Chat, None),
            format!("gs.ev.{a}.chat")
        );
        assert_eq!(
            s.for_records(a, RecordKind::Custom, Some("level_up")),
            format!("gs.ev.{a}.custom.level_up")
        );
        assert_eq!(s.all_events(), "gs.ev.>");
        assert_eq!(s.key_usage(), "gs.keys.used");
        assert_eq!(s.account_events(a), format!("gs.ev.{a}.>"));
    }
}
