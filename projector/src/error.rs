//! What can go wrong while projecting, and what the consumer does about it.

use shared::envelope::DecodeError;

/// A failure while folding the event log into PostgreSQL.
#[derive(Debug, thiserror::Error)]
pub enum ProjectorError {
    /// PostgreSQL failed or is unreachable: retry the chunk from the checkpoint.
    #[error("PostgreSQL: {0}")]
    Database(#[from] sqlx::Error),
    /// NATS failed or is unreachable: recreate the consumer from the checkpoint.
    #[error("event log: {0}")]
    EventLog(String),
    /// A log message this build can never read: park it, don't retry it.
    #[error(transparent)]
    Unreadable(#[from] DecodeError),
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
            ProjectorError::Database(_) | ProjectorError::EventLog(_) => Disposition::Retry,
            ProjectorError::Unreadable(_) => Disposition::Park,
        }
    }

    /// The parked message's `reason` column.
    pub fn reason(&self) -> &'static str {
        match self {
            ProjectorError::Unreadable(DecodeError::UnknownVersion(_)) => "unknown_version",
            ProjectorError::Unreadable(DecodeError::Malformed(_)) => "undecodable",
            ProjectorError::Database(_) | ProjectorError::EventLog(_) => "transient",
        }
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

        let outage = ProjectorError::from(sqlx::Error::PoolTimedOut);
        assert_eq!(outage.disposition(), Disposition::Retry);
    }
}
