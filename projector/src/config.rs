//! The projector's settings, read from the environment.

use shared::config::{CommonConfig, or_default, required_url};
use shared::secret::DatabaseUrl;
use std::net::SocketAddr;
use std::time::Duration;

/// Everything the projector needs to run. `Debug` shows no secret (the URL's password is
/// redacted). It holds no key: the projector serves no API, so it needs no `ADMIN_KEY`.
#[derive(Debug, Clone)]
pub struct Config {
    /// NATS, the event log and how the ops endpoints are served, shared with the other services.
    pub common: CommonConfig,
    /// `DATABASE_URL`: the PostgreSQL database holding the read models.
    pub database_url: DatabaseUrl,
    /// `BIND_ADDR` (default `127.0.0.1:8083`): where the ops endpoints listen.
    pub bind_addr: SocketAddr,
    /// `PROJECTOR_BATCH_MAX` (default 500): log messages applied in one transaction at most.
    pub batch_max: usize,
    /// `PROJECTOR_BATCH_WAIT_MS` (default 20): how long a transaction waits for more messages
    /// after the first one arrives.
    pub batch_wait: Duration,
    /// `PROJECTOR_STALL_SECONDS` (default 60): no progress for this long while log messages
    /// wait makes the `projector_lag` readiness check fail (the projector is stuck).
    pub stall_after: Duration,
}

impl Config {
    /// Reads the settings; a missing `DATABASE_URL` is an error.
    pub fn from_env() -> anyhow::Result<Config> {
        let batch_max: usize = or_default("PROJECTOR_BATCH_MAX", 500)?;
        anyhow::ensure!(
            batch_max > 0,
            "environment variable PROJECTOR_BATCH_MAX must be at least 1"
        );
        Ok(Config {
            common: CommonConfig::from_env()?,
            database_url: required_url("DATABASE_URL")?,
            bind_addr: or_default("BIND_ADDR", SocketAddr::from(([127, 0, 0, 1], 8083)))?,
            batch_max,
            batch_wait: Duration::from_millis(or_default("PROJECTOR_BATCH_WAIT_MS", 20)?),
            stall_after: Duration::from_secs(or_default("PROJECTOR_STALL_SECONDS", 60)?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared::event_log::EventLogConfig;
    use shared::serve::ServeLimits;
    use shared::telemetry::LogFormat;

    #[test]
    fn debug_shows_no_secret() {
        let config = Config {
            common: CommonConfig {
                nats_url: "nats://nats-token-77aa@nats:4222".into(),
                event_log: EventLogConfig::default(),
                log_format: LogFormat::Json,
                serve: ServeLimits::default(),
                key_usage_flush: Duration::from_secs(30),
            },
            database_url: "postgres://projector:pg-pass-3141@db:5432/warden".into(),
            bind_addr: SocketAddr::from(([127, 0, 0, 1], 8083)),
            batch_max: 500,
            batch_wait: Duration::from_millis(20),
            stall_after: Duration::from_secs(60),
        };
        let shown = format!("{config:?} {config:#?}");
        for secret in ["nats-token-77aa", "pg-pass-3141"] {
            assert!(!shown.contains(secret), "{secret} printed in {shown}");
        }
        assert!(
            shown.contains("postgres://projector:***@db:5432/warden"),
            "{shown}"
        );
    }
}
