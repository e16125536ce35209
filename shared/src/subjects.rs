//! The subject scheme of the event log, partitioned by account.
//!
//! A log message is written to `<prefix>.part.<partition>.<account>.<kind>[.<event name>]`,
//! where `partition` is [`partition_of`] the account: every message of one account lands in
//! the same partition, so one consumer per partition sees an account's messages in log order.
//! The number of partitions is fixed when the stream is created and kept in the stream's
//! metadata ([`crate::event_log::PARTITIONS_METADATA`]); every writer and reader takes it from
//! there, never from its own configuration alone.
//!
//! Logs written before partitions hold messages on `<prefix>.ev.<account>.<kind>[.<name>]`
//! (the legacy form). The stream keeps both forms, and a partition's reader also reads the
//! legacy form, keeping the messages whose account hashes to it
//! ([`Subjects::partition_of_subject`]).
//!
//! Filters: one partition ([`Subjects::partition_events`]), one account
//! ([`Subjects::account_events`]), everything ([`Subjects::all_events`]).

use crate::records::RecordKind;
use uuid::Uuid;

/// The partitions a new stream gets unless `EVENT_PARTITIONS` says otherwise.
pub const DEFAULT_PARTITIONS: u16 = 8;
/// The most partitions a stream may have.
pub const MAX_PARTITIONS: u16 = 1024;

/// The partition of `account` among `partitions`: the 64-bit FNV-1a hash of the account id's
/// 16 bytes, modulo `partitions` (at least 1). Stable across versions and machines: changing
/// it would split an account's messages between partitions.
pub fn partition_of(account: Uuid, partitions: u16) -> u16 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let hash = account.as_bytes().iter().fold(OFFSET, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(PRIME)
    });
    // The remainder is below `partitions`, so it fits.
    (hash % u64::from(partitions.max(1))) as u16
}

/// Builds subjects under one prefix, for a log of a given number of partitions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subjects {
    prefix: String,
    partitions: u16,
}

impl Subjects {
    /// Subjects under `prefix` (e.g. `gs`) in a log of `partitions` partitions (at least 1).
    pub fn new(prefix: impl Into<String>, partitions: u16) -> Self {
        Self {
            prefix: prefix.into(),
            partitions: partitions.clamp(1, MAX_PARTITIONS),
        }
    }

    /// How many partitions the log has.
    pub fn partitions(&self) -> u16 {
        self.partitions
    }

    /// The partition of `account`'s messages.
    pub fn partition_of(&self, account: Uuid) -> u16 {
        partition_of(account, self.partitions)
    }

    /// The stream's subjects: the legacy form and the partitioned one.
    pub fn stream_subjects(&self) -> Vec<String> {
        vec![self.legacy_events(), format!("{}.part.>", self.prefix)]
    }

    /// Filters matching every event (every partition and the legacy form).
    pub fn all_events(&self) -> Vec<String> {
        self.stream_subjects()
    }

    /// Filters matching every event of one account (its partition and the legacy form).
    pub fn account_events(&self, account: Uuid) -> Vec<String> {
        vec![
            format!("{}.ev.{account}.>", self.prefix),
            format!(
                "{}.part.{}.{account}.>",
                self.prefix,
                self.partition_of(account)
            ),
        ]
    }

    /// Filters matching `account`'s messages of one kind (without a custom event name), in
    /// both forms.
    pub fn account_kind_events(&self, account: Uuid, kind: RecordKind) -> Vec<String> {
        vec![
            format!("{}.ev.{account}.{}", self.prefix, kind.as_str()),
            self.for_records(account, kind, None),
        ]
    }

    /// Filters a reader of `partition` consumes: its own subjects, and the legacy form, whose
    /// messages it keeps only when [`Self::partition_of_subject`] gives `partition`.
    pub fn partition_events(&self, partition: u16) -> Vec<String> {
        vec![
            format!("{}.part.{partition}.>", self.prefix),
            self.legacy_events(),
        ]
    }

    /// Every legacy (pre-partition) subject.
    fn legacy_events(&self) -> String {
        format!("{}.ev.>", self.prefix)
    }

    /// Where services report when keys were last used (core NATS, not in the stream).
    pub fn key_usage(&self) -> String {
        format!("{}.keys.used", self.prefix)
    }

    /// The subject of a log message; `name` is the custom event name.
    pub fn for_records(&self, account: Uuid, kind: RecordKind, name: Option<&str>) -> String {
        let partition = self.partition_of(account);
        match name {
            Some(name) => format!(
                "{}.part.{partition}.{account}.{}.{name}",
                self.prefix,
                kind.as_str()
            ),
            None => format!(
                "{}.part.{partition}.{account}.{}",
                self.prefix,
                kind.as_str()
            ),
        }
    }

    /// The account a log subject names, in either form; `None` for a subject of neither.
    pub fn account_of(&self, subject: &str) -> Option<Uuid> {
        let rest = subject
            .strip_prefix(self.prefix.as_str())?
            .strip_prefix('.')?;
        let mut tokens = rest.split('.');
        let account = match tokens.next()? {
            "ev" => tokens.next()?,
            "part" => {
                tokens.next()?;
                tokens.next()?
            }
            _ => return None,
        };
        Uuid::parse_str(account).ok()
    }

    /// The partition a log message belongs to: the token of a partitioned subject, the
    /// account's partition for a legacy one, and partition 0 for a legacy subject naming no
    /// account (so exactly one reader takes it, and parks it).
    pub fn partition_of_subject(&self, subject: &str) -> u16 {
        let partitioned = subject
            .strip_prefix(self.prefix.as_str())
            .and_then(|rest| rest.strip_prefix(".part."))
            .and_then(|rest| rest.split('.').next())
            .and_then(|token| token.parse::<u16>().ok());
        if let Some(partition) = partitioned {
            return partition;
        }
        self.account_of(subject)
            .map_or(0, |account| self.partition_of(account))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_carry_partition_account_kind_and_name() {
        let s = Subjects::new("gs", 8);
        let a = Uuid::nil();
        let p = s.partition_of(a);
        assert_eq!(
            s.for_records(a, RecordKind::Chat, None),
            format!("gs.part.{p}.{a}.chat")
        );
        assert_eq!(
            s.for_records(a, RecordKind::Custom, Some("level_up")),
            format!("gs.part.{p}.{a}.custom.level_up")
        );
        assert_eq!(s.all_events(), ["gs.ev.>", "gs.part.>"]);
        assert_eq!(s.key_usage(), "gs.keys.used");
        assert_eq!(
            s.account_events(a),
            [format!("gs.ev.{a}.>"), format!("gs.part.{p}.{a}.>")]
        );
        assert_eq!(s.partition_events(3), ["gs.part.3.>", "gs.ev.>"]);
    }

    #[test]
    fn the_partition_hash_is_fixed() {
        // Pinned: a change would split accounts' messages between partitions in live logs.
        let a = Uuid::parse_str("5f0c6d2e-8a43-4c1b-9f3e-2b7d1a9e6c40").unwrap();
        assert_eq!(partition_of(Uuid::nil(), 8), 5);
        assert_eq!(partition_of(a, 8), 2);
        assert_eq!(partition_of(a, 256), 226);
        assert_eq!(partition_of(a, 1), 0);
        assert_eq!(partition_of(a, 0), 0, "no partitions reads as one");
    }

    #[test]
    fn accounts_spread_over_partitions() {
        let mut counts = [0u32; 8];
        for i in 0..8_000u128 {
            counts[usize::from(partition_of(Uuid::from_u128(i * 7_919), 8))] += 1;
        }
        for count in counts {
            assert!((800..1_200).contains(&count), "{counts:?}");
        }
    }

    #[test]
    fn both_forms_name_their_account_and_partition() {
        let s = Subjects::new("gs", 8);
        let a = Uuid::from_u128(42);
        let p = s.partition_of(a);
        for subject in [
            s.for_records(a, RecordKind::Chat, None),
            s.for_records(a, RecordKind::Custom, Some("x")),
            format!("gs.ev.{a}.chat"),
            format!("gs.ev.{a}.custom.x"),
        ] {
            assert_eq!(s.account_of(&subject), Some(a), "{subject}");
            assert_eq!(s.partition_of_subject(&subject), p, "{subject}");
        }
        assert_eq!(s.account_of("gs.ev.not-a-uuid.chat"), None);
        assert_eq!(s.account_of("other.ev.x"), None);
        assert_eq!(s.partition_of_subject("gs.ev.not-a-uuid.chat"), 0);
    }
}
