//! The event log's JetStream configuration, and the start-up check every service runs.
//!
//! The stream is the system of record: replay rebuilds every read model from it, so it never
//! discards on its own (no age, size or count limits, and `discard: new` should one ever be set),
//! and deletes and purges are denied. The duplicate window is explicit; exactly-once beyond it
//! rests on the projector's unique keys.

use crate::subjects::Subjects;
use async_nats::jetstream::{kv, stream};
use std::time::Duration;

/// Where the log lives and how it is shaped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventLogConfig {
    /// Stream name, e.g. `GS_EVENTS`.
    pub stream: String,
    /// Subject prefix, e.g. `gs`.
    pub subject_prefix: String,
    /// Replicas of the stream (1 locally, 3 in a cluster).
    pub replicas: usize,
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
    /// The subject builder for this log.
    pub fn subjects(&self) -> Subjects {
        Subjects::new(self.subject_prefix.clone())
    }

    /// The stream configuration to create.
    pub fn stream_config(&self) -> stream::Config {
        stream::Config {
            name: self.stream.clone(),
            description: Some("Warden event log: every accepted plugin write, in order".into()),
            subjects: vec![self.subjects().all_events()],
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
    fn a_different_duplicate_window_is_refused() {
        let cfg = EventLogConfig::default();
        let mut actual = cfg.stream_config();
        actual.duplicate_window = Duration::from_secs(60);
        assert!(cfg.check(&actual).is_err());
    }
}
