//! Configuration read from the environment, shared by every service.

use crate::event_log::EventLogConfig;
use crate::secret::{NatsUrl, RedactedUrl, SecretString};
use crate::serve::ServeLimits;
use crate::telemetry::LogFormat;
use std::str::FromStr;
use std::time::Duration;

/// A missing or unreadable setting.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A required variable is unset.
    #[error("environment variable {0} is required")]
    Missing(&'static str),
    /// A variable could not be parsed.
    #[error("environment variable {name} has an invalid value: {reason}")]
    Invalid {
        /// The variable.
        name: &'static str,
        /// What is wrong.
        reason: String,
    },
}

/// A required variable.
pub fn required(name: &'static str) -> Result<String, ConfigError> {
    std::env::var(name)
        .ok()
        .filter(|v| !v.is_empty())
        .ok_or(ConfigError::Missing(name))
}

/// An optional variable with a default.
pub fn or_default<T: FromStr>(name: &'static str, default: T) -> Result<T, ConfigError>
where
    T::Err: std::fmt::Display,
{
    match std::env::var(name) {
        Ok(v) if !v.is_empty() => v.parse().map_err(|e: T::Err| ConfigError::Invalid {
            name,
            reason: e.to_string(),
        }),
        _ => Ok(default),
    }
}

/// The settings every service shares: where NATS and the log are, and how HTTP is served.
/// Holds no key: `ADMIN_KEY` is read by the services that check it ([`admin_key`]).
#[derive(Debug, Clone)]
pub struct CommonConfig {
    /// `NATS_URL` (default `nats://127.0.0.1:4222`); formats with credentials redacted.
    pub nats_url: NatsUrl,
    /// `EVENT_STREAM`, `SUBJECT_PREFIX`, `STREAM_REPLICAS`, `DUPLICATE_WINDOW_SECS`, `KEY_BUCKET`,
    /// `RATE_BUCKET`.
    pub event_log: EventLogConfig,
    /// `LOG_FORMAT`: `pretty` (default) or `json`.
    pub log_format: LogFormat,
    /// `MAX_CONNECTIONS`, `HEADER_READ_TIMEOUT_SECS`, `BODY_READ_TIMEOUT_SECS`,
    /// `REQUEST_TIMEOUT_SECS`: how HTTP is served.
    pub serve: ServeLimits,
    /// `KEY_USAGE_FLUSH_SECS` (default 30): how often ingest and query-api report when each
    /// key was last used.
    pub key_usage_flush: Duration,
}

/// `ADMIN_KEY` (required): the operator's secret for the admin API, read by ingest (to refuse
/// it on plugin routes) and query-api (to accept it on admin routes); the projector needs none.
pub fn admin_key() -> Result<SecretString, ConfigError> {
    required("ADMIN_KEY").map(SecretString::from)
}

/// A required variable holding a secret.
pub fn required_secret(name: &'static str) -> Result<SecretString, ConfigError> {
    required(name).map(SecretString::from)
}

/// An optional variable holding a secret (unset or empty is `None`).
pub fn optional_secret(name: &'static str) -> Option<SecretString> {
    std::env::var(name)
        .ok()
        .filter(|v| !v.is_empty())
        .map(SecretString::from)
}

/// A required connection URL (e.g. `DATABASE_URL`), redacted when formatted.
pub fn required_url(name: &'static str) -> Result<RedactedUrl, ConfigError> {
    required(name).map(RedactedUrl::from)
}

/// An optional connection URL (unset or empty is `None`).
pub fn optional_url(name: &'static str) -> Option<RedactedUrl> {
    std::env::var(name)
        .ok()
        .filter(|v| !v.is_empty())
        .map(RedactedUrl::from)
}

/// `NATS_URL` (default `nats://127.0.0.1:4222`).
pub fn nats_url() -> Result<NatsUrl, ConfigError> {
    or_default("NATS_URL", "nats://127.0.0.1:4222".to_owned()).map(NatsUrl::from)
}

impl CommonConfig {
    /// Reads the shared settings.
    pub fn from_env() -> Result<Self, ConfigError> {
        let defaults = EventLogConfig::default();
        Ok(Self {
            nats_url: nats_url()?,
            event_log: EventLogConfig {
                stream: or_default("EVENT_STREAM", defaults.stream)?,
                subject_prefix: or_default("SUBJECT_PREFIX", defaults.subject_prefix)?,
                replicas: or_default("STREAM_REPLICAS", defaults.replicas)?,
                duplicate_window: Duration::from_secs(or_default(
                    "DUPLICATE_WINDOW_SECS",
                    defaults.duplicate_window.as_secs(),
                )?),
                key_bucket: or_default("KEY_BUCKET", defaults.key_bucket)?,
                rate_bucket: or_default("RATE_BUCKET", defaults.rate_bucket)?,
            },
            log_format: LogFormat::parse(&or_default("LOG_FORMAT", "pretty".to_owned())?),
            serve: ServeLimits::from_env()?,
            key_usage_flush: Duration::from_secs(or_default("KEY_USAGE_FLUSH_SECS", 30)?.max(1)),
        })
    }
}

impl CommonConfig {
    /// The servers named by `NATS_URL`: one URL, or a comma-separated list of a cluster's
    /// members (async-nats reads a single string as one URL, so the list is split here).
    pub fn nats_servers(&self) -> Vec<String> {
        nats_servers(self.nats_url.expose())
    }
}

/// Splits a comma-separated list of NATS URLs, trimming blanks.
pub fn nats_servers(urls: &str) -> Vec<String> {
    urls.split(',')
        .map(str::trim)
        .filter(|url| !url.is_empty())
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod nats_servers_tests {
    #[test]
    fn a_comma_separated_list_is_split() {
        assert_eq!(
            super::nats_servers("nats://a:4222, nats://b:4222,,nats://c:4222 "),
            ["nats://a:4222", "nats://b:4222", "nats://c:4222"]
        );
        assert_eq!(super::nats_servers("nats://a:4222"), ["nats://a:4222"]);
    }
}
