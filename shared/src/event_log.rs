//! The event log's JetStream configuration, and the start-up check every service runs.
//!
//! The stream is the system of record: replay rebuilds every read model from it, so it never
//! discards on its own (no age, size or count limits, and `discard: new` should one ever be set),
//! and deletes and purges are denied. The duplicate window is explicit; exactly-once beyond it
//! rests on the projector's unique keys.

use crate::subjects::{DEFAULT_PARTITIONS, MAX_PARTITIONS, Subjects};
use async_nats::jetstream::{kv, stream};
use std::time::Duration;

/// The stream metadata key holding the number of partitions ([`crate::subjects`]), set when
/// the stream is created (or first opened by a version with partitions) and never changed.
pub const PARTITIONS_METADATA: &str = "warden_partitions";

/// Where the log lives and how it is shaped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventLogConfig {
    /// Stream name, e.g. `GS_EVENTS`.
    pub stream: String,
    /// Subject prefix, e.g. `gs`.
    pub subject_prefix: String,
    /// Replicas of the stream (1 locally, 3 in a cluster).
    pub replicas: usize,
    /// `EVENT_PARTITIONS`: the partitions a stream created now gets. An existing stream keeps
    /// the number in its metadata ([`PARTITIONS_METADATA`]); services use that one.
    pub partitions: u16,
    /// Window in which JetStream drops a publish with a `Nats-Msg-Id` it has seen.
    pub duplicate_window: Duration,
    /// KV bucket holding the hashes of live API keys.
    pub key_bucket: String,
    /// KV bucket (in memory) holding every client's rate-limit window, shared by replicas.
    pub rate_bucket: String,
    /// `PRIVACY_BUCKET`: the name the two privacy key buckets start with (see
    /// [`crate::privacy::PrivacyBuckets`]).
    pub privacy_bucket: String,
}

impl Default for EventLogConfig {
    fn default() -> Self {
        Self {
            stream: "GS_EVENTS".into(),
            subject_prefix: "gs".into(),
            replicas: 1,
            partitions: DEFAULT_PARTITIONS,
            duplicate_window: Duration::from_secs(120),
            key_bucket: "GS_KEYS".into(),
            rate_bucket: "GS_RATES".into(),
            privacy_bucket: "GS_PRIVACY".into(),
        }
    }
}

/// The stream found differs from the one this build needs.
#[derive(Debug, thiserror::Error)]
#[error(
    "event stream '{stream}' is configured differently from what this service needs: {}. \
     Fix the stream (nats stream edit) or point EVENT_STREAM at the right one; refusing to start",
    differences.join("; ")
)]
pub struct StreamMismatch {
    /// The stream's name.
    pub stream: String,
    /// One line per differing setting.
    pub differences: Vec<String>,
}

impl EventLogConfig {
    /// The subject builder for this log, with the configured number of partitions: right for
    /// a stream this configuration created; services opening a stream use the number in its
    /// metadata ([`crate::nats::EventStream::subjects`]).
    pub fn subjects(&self) -> Subjects {
        Subjects::new(self.subject_prefix.clone(), self.partitions)
    }

    /// The stream configuration to create.
    pub fn stream_config(&self) -> stream::Config {
        stream::Config {
            name: self.stream.clone(),
            description: Some("Warden event log: every accepted plugin write, in order".into()),
            subjects: self.subjects().stream_subjects(),
            metadata: [(PARTITIONS_METADATA.to_owned(), self.partitions.to_string())].into(),
            retention: stream::RetentionPolicy::Limits,
            storage: stream::StorageType::File,
            discard: stream::DiscardPolicy::New,
            max_messages: -1,
            max_bytes: -1,
            max_age: Duration::ZERO,
            max_messages_per_subject: -1,
            max_message_size: -1,
            num_replicas: self.replicas,
            duplicate_window: self.duplicate_window,
            deny_delete: true,
            deny_purge: true,
            allow_rollup: false,
            ..Default::default()
        }
    }

    /// Compares a live stream's configuration with [`Self::stream_config`].
    pub fn check(&self, actual: &stream::Config) -> Result<(), StreamMismatch> {
        let want = self.stream_config();
        let mut differences = Vec::new();
        if let Err(error) = partitions_of(actual) {
            differences.push(error);
        }
        let mut differ = |what: &str, want: String, got: String| {
            if want != got {
                differences.push(format!("{what} is {got}, expected {want}"));
            }
        };
        differ(
            "subjects",
            format!("{:?}", want.subjects),
            format!("{:?}", actual.subjects),
        );
        differ(
            "storage",
            format!("{:?}", want.storage),
            format!("{:?}", actual.storage),
        );
        differ(
            "retention",
            format!("{:?}", want.retention),
            format!("{:?}", actual.retention),
        );
        differ(
            "duplicate_window",
            format!("{:?}", want.duplicate_window),
            format!("{:?}", actual.duplicate_window),
        );
        differ(
            "num_replicas",
            want.num_replicas.to_string(),
            actual.num_replicas.max(1).to_string(),
        );
        let unlimited = |v: i64| v <= 0;
        if !unlimited(actual.max_messages)
            || !unlimited(actual.max_bytes)
            || !actual.max_age.is_zero()
            || !unlimited(actual.max_messages_per_subject)
        {
            differences.push(
                "a retention limit is set (max_msgs, max_bytes, max_age or max_msgs_per_subject); \
                 the log must keep every event for replay"
                    .into(),
            );
        }
        if !actual.deny_delete || !actual.deny_purge {
            differences.push("deny_delete and deny_purge must both be true".into());
        }
        if differences.is_empty() {
            Ok(())
        } else {
            Err(StreamMismatch {
                stream: self.stream.clone(),
                differences,
            })
        }
    }

    /// The KV bucket of live key hashes: only the latest value matters.
    pub fn key_bucket_config(&self) -> kv::Config {
        kv::Config {
            bucket: self.key_bucket.clone(),
            description: "Warden API keys: sha256(secret) -> key entry".into(),
            history: 1,
            storage: stream::StorageType::File,
            num_replicas: self.replicas,
            ..Default::default()
        }
    }
}

/// The partitions of a stream, from its metadata.
pub fn partitions_of(config: &stream::Config) -> Result<u16, String> {
    let Some(value) = config.metadata.get(PARTITIONS_METADATA) else {
        return Err(format!("its metadata has no {PARTITIONS_METADATA}"));
    };
    match value.parse::<u16>() {
        Ok(partitions) if (1..=MAX_PARTITIONS).contains(&partitions) => Ok(partitions),
        _ => Err(format!(
            "its metadata {PARTITIONS_METADATA} is '{value}', expected a number from 1 to \
             {MAX_PARTITIONS}"
        )),
    }
}

/// A stream made before partitions (one subject, `<prefix>.ev.>`, and no partition count):
/// what it needs to become partitioned, keeping every message where it is.
pub fn upgrade_to_partitions(
    log: &EventLogConfig,
    actual: &stream::Config,
) -> Option<stream::Config> {
    let legacy = vec![format!("{}.ev.>", log.subject_prefix)];
    if actual.subjects != legacy || actual.metadata.contains_key(PARTITIONS_METADATA) {
        return None;
    }
    let mut upgraded = actual.clone();
    upgraded.subjects = log.subjects().stream_subjects();
    upgraded
        .metadata
        .insert(PARTITIONS_METADATA.to_owned(), log.partitions.to_string());
    Some(upgraded)
}

impl EventLogConfig {
    /// The rate-limit bucket: memory storage (losing it on a broker restart only forgets the
    /// last minute's counts) and entries that expire a little after the window.
    pub fn rate_bucket_config(&self) -> kv::Config {
        kv::Config {
            bucket: self.rate_bucket.clone(),
            description: "Warden rate limits: client -> requests accepted in the last 60 s".into(),
            history: 1,
            max_age: Duration::from_secs(65),
            storage: stream::StorageType::Memory,
            num_replicas: self.replicas,
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stream_it_creates_passes_its_own_check() {
        let cfg = EventLogConfig::default();
        assert!(cfg.check(&cfg.stream_config()).is_ok());
    }

    #[test]
    fn a_stream_that_forgets_is_refused() {
        let cfg = EventLogConfig::default();
        let mut actual = cfg.stream_config();
        actual.max_age = Duration::from_secs(3600);
        actual.deny_purge = false;
        let err = cfg.check(&actual).unwrap_err();
        assert_eq!(err.differences.len(), 2, "{err}");
        assert!(err.to_string().contains("refusing to start"));
    }

    #[test]
    fn the_partitions_come_from_the_metadata() {
        let cfg = EventLogConfig {
            partitions: 16,
            ..EventLogConfig::default()
        };
        assert_eq!(partitions_of(&cfg.stream_config()), Ok(16));
        let mut actual = cfg.stream_config();
        actual
            .metadata
            .insert(PARTITIONS_METADATA.into(), "0".into());
        assert!(cfg.check(&actual).is_err());
        actual.metadata.clear();
        assert!(cfg.check(&actual).is_err());
    }

    #[test]
    fn a_legacy_stream_upgrades_to_partitions_once() {
        let cfg = EventLogConfig::default();
        let mut legacy = cfg.stream_config();
        legacy.subjects = vec!["gs.ev.>".into()];
        legacy.metadata.clear();
        assert!(cfg.check(&legacy).is_err());
        let upgraded = upgrade_to_partitions(&cfg, &legacy).expect("a legacy stream upgrades");
        assert!(cfg.check(&upgraded).is_ok());
        assert_eq!(partitions_of(&upgraded), Ok(cfg.partitions));
        assert!(upgrade_to_partitions(&cfg, &upgraded).is_none());
    }

    #[test]
    fn a_different_duplicate_window_is_refused() {
        let cfg = EventLogConfig::default();
        let mut actual = cfg.stream_config();
        actual.duplicate_window = Duration::from_secs(60);
        assert!(cfg.check(&actual).is_err());
    }
}
