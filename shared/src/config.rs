//! Configuration read from the environment, shared by every service.

use crate::event_log::EventLogConfig;
use crate::secret::{NatsUrl, RedactedUrl, SecretString};
use crate::serve::ServeLimits;
use crate::telemetry::LogFormat;
use std::collections::BTreeMap;
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

/// Where settings are read from: the process environment ([`Vars::process`]), or only the
/// values given ([`Vars::empty`] + [`Vars::set`]). Every service's `Config::from_vars` is its one
/// loader: `from_env` is `from_vars(&Vars::process())`, and tests build their configs through
/// the same code, naming only what differs from the defaults (`test_support::test_vars`).
#[derive(Clone, Default)]
pub struct Vars {
    /// Values that win over the environment's (all there is when `process` is false).
    values: BTreeMap<String, String>,
    /// Whether names missing from `values` are looked up in the process environment.
    process: bool,
}

impl Vars {
    /// The process environment (plus anything [`set`](Vars::set) on top).
    pub fn process() -> Vars {
        Vars {
            values: BTreeMap::new(),
            process: true,
        }
    }

    /// No settings at all: every name reads as unset until [`set`](Vars::set). A test's
    /// config then does not depend on the shell it runs in.
    pub fn empty() -> Vars {
        Vars::default()
    }

    /// With `name` set to `value`.
    #[must_use]
    pub fn set(mut self, name: &str, value: impl ToString) -> Vars {
        self.values.insert(name.to_owned(), value.to_string());
        self
    }

    /// With the variables that [`CommonConfig`] reads back as `log`.
    #[must_use]
    pub fn with_event_log(self, log: &EventLogConfig) -> Vars {
        self.set("EVENT_STREAM", &log.stream)
            .set("SUBJECT_PREFIX", &log.subject_prefix)
            .set("STREAM_REPLICAS", log.replicas)
            .set("EVENT_PARTITIONS", log.partitions)
            .set("DUPLICATE_WINDOW_SECS", log.duplicate_window.as_secs())
            .set("KEY_BUCKET", &log.key_bucket)
            .set("RATE_BUCKET", &log.rate_bucket)
            .set("PRIVACY_BUCKET", &log.privacy_bucket)
    }

    /// The value of `name`; unset and empty are both `None`.
    pub fn get(&self, name: &str) -> Option<String> {
        match self.values.get(name) {
            Some(value) => Some(value.clone()),
            None if self.process => std::env::var(name).ok(),
            None => None,
        }
        .filter(|v| !v.is_empty())
    }

    /// A required variable.
    pub fn required(&self, name: &'static str) -> Result<String, ConfigError> {
        self.get(name).ok_or(ConfigError::Missing(name))
    }

    /// An optional variable with a default.
    pub fn or_default<T: FromStr>(&self, name: &'static str, default: T) -> Result<T, ConfigError>
    where
        T::Err: std::fmt::Display,
    {
        match self.get(name) {
            Some(v) => v.parse().map_err(|e: T::Err| ConfigError::Invalid {
                name,
                reason: e.to_string(),
            }),
            None => Ok(default),
        }
    }

    /// `ADMIN_KEY` (required): the operator's secret for the admin API, read by ingest (to
    /// refuse it on plugin routes) and query-api (to accept it on admin routes); the projector
    /// needs none.
    pub fn admin_key(&self) -> Result<SecretString, ConfigError> {
        self.required_secret("ADMIN_KEY")
    }

    /// A required variable holding a secret.
    pub fn required_secret(&self, name: &'static str) -> Result<SecretString, ConfigError> {
        self.required(name).map(SecretString::from)
    }

    /// An optional variable holding a secret (unset or empty is `None`).
    pub fn optional_secret(&self, name: &'static str) -> Option<SecretString> {
        self.get(name).map(SecretString::from)
    }

    /// A required connection URL (e.g. `DATABASE_URL`), redacted when formatted.
    pub fn required_url(&self, name: &'static str) -> Result<RedactedUrl, ConfigError> {
        self.required(name).map(RedactedUrl::from)
    }

    /// An optional connection URL (unset or empty is `None`).
    pub fn optional_url(&self, name: &'static str) -> Option<RedactedUrl> {
        self.get(name).map(RedactedUrl::from)
    }

    /// An optional address others are told to reach a service at (`PLUGIN_BASE_URL`,
    /// `DASHBOARD_URL`): an http or https URL with a host, kept without a trailing `/`. Unset or
    /// blank: `None`.
    pub fn optional_base_url(&self, name: &'static str) -> Result<Option<String>, ConfigError> {
        let Some(text) = self.get(name).filter(|v| !v.trim().is_empty()) else {
            return Ok(None);
        };
        let url = url::Url::parse(text.trim()).map_err(|error| ConfigError::Invalid {
            name,
            reason: format!("not a URL: {error}"),
        })?;
        if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
            return Err(ConfigError::Invalid {
                name,
                reason: "must be an http:// or https:// URL with a host".to_owned(),
            });
        }
        Ok(Some(url.as_str().trim_end_matches('/').to_owned()))
    }

    /// `NATS_URL` (default `nats://127.0.0.1:4222`).
    pub fn nats_url(&self) -> Result<NatsUrl, ConfigError> {
        self.or_default("NATS_URL", "nats://127.0.0.1:4222".to_owned())
            .map(NatsUrl::from)
    }
}

/// Names only: values may be secrets.
impl std::fmt::Debug for Vars {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vars")
            .field("set", &self.values.keys().collect::<Vec<_>>())
            .field("process", &self.process)
            .finish()
    }
}

/// The settings every service shares: where NATS and the log are, and how HTTP is served.
/// Holds no key: `ADMIN_KEY` is read by the services that check it ([`Vars::admin_key`]).
#[derive(Debug, Clone)]
pub struct CommonConfig {
    /// `NATS_URL` (default `nats://127.0.0.1:4222`); formats with credentials redacted.
    pub nats_url: NatsUrl,
    /// `EVENT_STREAM`, `SUBJECT_PREFIX`, `STREAM_REPLICAS`, `EVENT_PARTITIONS`,
    /// `DUPLICATE_WINDOW_SECS`, `KEY_BUCKET`, `RATE_BUCKET`, `PRIVACY_BUCKET`.
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

impl CommonConfig {
    /// Reads the shared settings from `vars`.
    pub fn from_vars(vars: &Vars) -> Result<Self, ConfigError> {
        let defaults = EventLogConfig::default();
        Ok(Self {
            nats_url: vars.nats_url()?,
            event_log: EventLogConfig {
                stream: vars.or_default("EVENT_STREAM", defaults.stream)?,
                subject_prefix: vars.or_default("SUBJECT_PREFIX", defaults.subject_prefix)?,
                replicas: vars.or_default("STREAM_REPLICAS", defaults.replicas)?,
                partitions: event_partitions(vars)?,
                duplicate_window: Duration::from_secs(
                    vars.or_default("DUPLICATE_WINDOW_SECS", defaults.duplicate_window.as_secs())?,
                ),
                key_bucket: vars.or_default("KEY_BUCKET", defaults.key_bucket)?,
                rate_bucket: vars.or_default("RATE_BUCKET", defaults.rate_bucket)?,
                privacy_bucket: vars.or_default("PRIVACY_BUCKET", defaults.privacy_bucket)?,
            },
            log_format: LogFormat::parse(&vars.or_default("LOG_FORMAT", "pretty".to_owned())?),
            serve: ServeLimits::from_vars(vars)?,
            key_usage_flush: Duration::from_secs(
                vars.or_default("KEY_USAGE_FLUSH_SECS", 30)?.max(1),
            ),
        })
    }
}

/// `EVENT_PARTITIONS`: 1 to [`crate::subjects::MAX_PARTITIONS`].
fn event_partitions(vars: &Vars) -> Result<u16, ConfigError> {
    let max = crate::subjects::MAX_PARTITIONS;
    match vars.or_default("EVENT_PARTITIONS", crate::subjects::DEFAULT_PARTITIONS)? {
        partitions @ 1.. if partitions <= max => Ok(partitions),
        other => Err(ConfigError::Invalid {
            name: "EVENT_PARTITIONS",
            reason: format!("{other} is not from 1 to {max}"),
        }),
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
mod tests {
    use super::*;

    #[test]
    fn a_comma_separated_list_is_split() {
        assert_eq!(
            nats_servers("nats://a:4222, nats://b:4222,,nats://c:4222 "),
            ["nats://a:4222", "nats://b:4222", "nats://c:4222"]
        );
        assert_eq!(nats_servers("nats://a:4222"), ["nats://a:4222"]);
    }

    #[test]
    fn empty_vars_read_nothing_from_the_environment() -> Result<(), ConfigError> {
        // PATH is set in any test process; an empty source must not see it.
        assert!(Vars::process().get("PATH").is_some());
        assert_eq!(Vars::empty().get("PATH"), None);
        let vars = Vars::empty().set("PATH", "/x").set("EMPTY", "");
        assert_eq!(vars.get("PATH").as_deref(), Some("/x"));
        assert_eq!(vars.get("EMPTY"), None);
        assert_eq!(vars.or_default("EMPTY", 7)?, 7);
        assert!(matches!(
            vars.required("EMPTY"),
            Err(ConfigError::Missing("EMPTY"))
        ));
        assert!(matches!(
            Vars::empty().set("N", "x").or_default("N", 1),
            Err(ConfigError::Invalid { name: "N", .. })
        ));
        Ok(())
    }

    #[test]
    fn an_event_log_round_trips_through_its_variables() -> Result<(), ConfigError> {
        let log = EventLogConfig {
            stream: "T_1".into(),
            subject_prefix: "t1".into(),
            replicas: 3,
            partitions: 16,
            duplicate_window: Duration::from_secs(5),
            key_bucket: "K_1".into(),
            rate_bucket: "R_1".into(),
            privacy_bucket: "P_1".into(),
        };
        let common = CommonConfig::from_vars(&Vars::empty().with_event_log(&log))?;
        assert_eq!(common.event_log, log);
        assert_eq!(common.nats_url.expose(), "nats://127.0.0.1:4222");
        Ok(())
    }

    #[test]
    fn event_partitions_outside_their_range_are_refused() {
        for bad in ["0", "1025", "many"] {
            let vars = Vars::empty().set("EVENT_PARTITIONS", bad);
            assert!(
                matches!(
                    CommonConfig::from_vars(&vars),
                    Err(ConfigError::Invalid {
                        name: "EVENT_PARTITIONS",
                        ..
                    })
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn debug_names_the_variables_but_shows_no_value() {
        let shown = format!("{:?}", Vars::empty().set("ADMIN_KEY", "wdn_admin_s3cret"));
        assert!(
            shown.contains("ADMIN_KEY") && !shown.contains("s3cret"),
            "{shown}"
        );
    }
}
