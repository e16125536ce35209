//! What can go wrong while projecting, and what the consumer does about it.
//!
//! The one question that matters is whether retrying can help. An outage (PostgreSQL or NATS
//! unreachable, a timeout, a deadlock, a missing table during a deploy) passes: the consumer
//! goes back to its checkpoint and tries again, so nothing is skipped. A message PostgreSQL
//! refuses for what it holds (a NUL in text, a number out of range, an index entry too large)
//! fails the same way on every retry: it is isolated and parked, so it cannot halt the log
//! for every account behind it.

use shared::envelope::DecodeError;
use shared::privacy::KeyringError;

/// A failure while folding the event log into PostgreSQL.
#[derive(Debug, thiserror::Error)]
pub enum ProjectorError {
    /// PostgreSQL failed, is unreachable, or refused what a message holds; see
    /// [`refuses_data`] for which.
    #[error("PostgreSQL: {0}")]
    Database(#[from] sqlx::Error),
    /// NATS failed or is unreachable: recreate the consumer from the checkpoint.
    #[error("event log: {0}")]
    EventLog(String),
    /// A log message this build can never read: park it, don't retry it.
    #[error(transparent)]
    Unreadable(#[from] DecodeError),
    /// The privacy keys could not be read (their buckets are unreachable, or the master key
    /// does not open them): retried like an outage, never parked, since parking would set
    /// aside messages that are fine once the keys can be read again.
    #[error("privacy keys: {0}")]
    Keyring(#[from] KeyringError),
    /// A read model's checkpoint stands below what this process saw committed for it:
    /// PostgreSQL lost its last commits (the models commit asynchronously, and it crashed) or
    /// an operator rewound it. Retried: the consumer resumes from the checkpoints, which
    /// applies again what was lost instead of skipping it.
    #[error(
        "the checkpoint of {projection} in partition {partition} is at {found}, below the \
         {committed} this process committed; resuming from the checkpoints"
    )]
    CheckpointBehind {
        /// The read model.
        projection: &'static str,
        /// The log partition.
        partition: u16,
        /// The checkpoint found.
        found: u64,
        /// What this process committed for it earlier.
        committed: u64,
    },
}

/// What the consumer does with a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disposition {
    /// Back off, re-read the checkpoint and consume again from there (nothing is skipped).
    Retry,
    /// Store the message in `parked_messages` and move on (it would fail forever).
    Park,
}

impl ProjectorError {
    /// A NATS failure, whatever async-nats error type it came as.
    pub fn event_log(error: impl std::fmt::Display) -> Self {
        ProjectorError::EventLog(error.to_string())
    }

    /// Whether retrying can ever help.
    pub fn disposition(&self) -> Disposition {
        match self {
            ProjectorError::Database(error) if refuses_data(error) => Disposition::Park,
            ProjectorError::Database(_)
            | ProjectorError::EventLog(_)
            | ProjectorError::Keyring(_)
            | ProjectorError::CheckpointBehind { .. } => Disposition::Retry,
            ProjectorError::Unreadable(_) => Disposition::Park,
        }
    }

    /// The reason code of a parked message: the start of its `reason` column and the `reason`
    /// label of `projector_parked_total` (a bounded set: a few names and SQLSTATE codes).
    pub fn reason(&self) -> String {
        match self {
            ProjectorError::Unreadable(DecodeError::UnknownVersion(_)) => {
                "unknown_version".to_owned()
            }
            ProjectorError::Unreadable(DecodeError::Malformed(_)) => "undecodable".to_owned(),
            ProjectorError::Database(error) if refuses_data(error) => refusal_reason(error),
            ProjectorError::Database(_)
            | ProjectorError::EventLog(_)
            | ProjectorError::Keyring(_)
            | ProjectorError::CheckpointBehind { .. } => "transient".to_owned(),
        }
    }
}

/// The reason code of a refusal ([`refuses_data`]): `sqlstate_<code>`, or `unencodable` when
/// the driver refused the value before sending it.
pub(crate) fn refusal_reason(error: &sqlx::Error) -> String {
    match sqlstate(error) {
        Some(code) => format!("sqlstate_{code}"),
        None => "unencodable".to_owned(),
    }
}

/// The SQLSTATE of an error PostgreSQL answered with.
pub fn sqlstate(error: &sqlx::Error) -> Option<String> {
    match error {
        sqlx::Error::Database(db) => db.code().map(|code| code.into_owned()),
        _ => None,
    }
}

/// Whether `error` says PostgreSQL (or the driver, before sending) refused the data itself, so
/// the same statement with the same values fails again however often it is retried.
///
/// Refusals, by SQLSTATE class:
/// - `21` cardinality violation (e.g. an upsert naming one row twice),
/// - `22` data exception (NUL in text `22021`, `\u0000` in jsonb `22P05`, out of range `22003`,
///   bad datetime `22008`, ...),
/// - `23` integrity constraint violation: the folds resolve every expected conflict with
///   `ON CONFLICT`, so one that surfaces is about this message's values,
/// - `54` program limit exceeded (an index row over ~2.7 kB `54000`, too many arguments),
/// - and a value the driver cannot encode.
///
/// Everything else is retried: connection failures and pool timeouts, `08` connection,
/// `40` serialization failure and deadlock, `53` insufficient resources (disk full, out of
/// memory), `55` lock not available, `57` operator intervention (shutdown, cancel), `58`/`XX`
/// system and internal errors, and `42` syntax or access rule violation. Class 42 says the
/// schema does not match the code (a table renamed or missing during a deploy, a grant
/// missing); it fails every message alike, so parking would drain the whole log into
/// `parked_messages` instead of waiting for the fix. A stall is visible on `/readyz`.
pub fn refuses_data(error: &sqlx::Error) -> bool {
    match error {
        sqlx::Error::Database(db) => db
            .code()
            .is_some_and(|code| matches!(code.get(..2), Some("21" | "22" | "23" | "54"))),
        sqlx::Error::Encode(_) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::envelope::LogMessage;

    #[test]
    fn unreadable_messages_are_parked_and_outages_retried() {
        let garbage = LogMessage::decode(b"\x00garbage").expect_err("garbage");
        let error = ProjectorError::from(garbage);
        assert_eq!(error.disposition(), Disposition::Park);
        assert_eq!(error.reason(), "undecodable");

        let newer = LogMessage::decode(br#"{"v":99}"#).expect_err("newer version");
        assert_eq!(ProjectorError::from(newer).reason(), "unknown_version");

        for outage in [
            sqlx::Error::PoolTimedOut,
            sqlx::Error::PoolClosed,
            sqlx::Error::Io(std::io::Error::other("connection reset")),
            sqlx::Error::WorkerCrashed,
        ] {
            let outage = ProjectorError::from(outage);
            assert_eq!(outage.disposition(), Disposition::Retry, "{outage}");
            assert_eq!(outage.reason(), "transient");
        }
        let keys = ProjectorError::from(KeyringError::Unavailable("no responders".into()));
        assert_eq!(keys.disposition(), Disposition::Retry, "{keys}");
    }

    #[test]
    fn values_the_driver_cannot_encode_are_parked() {
        let error = ProjectorError::from(sqlx::Error::Encode("too long".into()));
        assert_eq!(error.disposition(), Disposition::Park);
        assert_eq!(error.reason(), "unencodable");
    }
}
