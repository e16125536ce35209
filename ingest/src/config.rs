//! Ingest settings, from the environment.

use crate::coalesce::CoalesceConfig;
use shared::config::{CommonConfig, ConfigError, Vars};
use shared::privacy::PrivacyConfig;
use shared::secret::SecretString;
use std::net::SocketAddr;
use std::time::Duration;

/// Everything ingest needs to run. `Debug` shows no secret (keys and URL passwords redacted).
#[derive(Debug, Clone)]
pub struct Config {
    /// NATS, the event log and how HTTP is served.
    pub common: CommonConfig,
    /// `ADMIN_KEY`: the operator's secret, refused on the plugin routes.
    pub admin_key: SecretString,
    /// `BIND_ADDR` (default `127.0.0.1:8081`); port 0 picks a free port.
    pub bind_addr: SocketAddr,
    /// `IP_HASH_KEY`: secret for the keyed hash of player IPs.
    pub ip_hash_key: SecretString,
    /// `PRIVACY_MASTER_KEY` and `PRIVACY_ENCRYPTION`: how personal fields are sealed.
    pub privacy: PrivacyConfig,
    /// `PUBLISH_TIMEOUT_MS` (default 5000): how long a write waits for JetStream's ack.
    pub publish_timeout: Duration,
    /// `MAX_WRITES_IN_FLIGHT` (default 256): authenticated writes decoded and awaiting their
    /// ack at once; more wait, unread, for a slot. Bounds memory under any number of clients
    /// (each write holds its body, records and log message, ~70 KiB for 100 chat lines).
    pub max_writes_in_flight: usize,
    /// `INGEST_COALESCE*`: how concurrent writes for one subject share a publish.
    pub coalesce: CoalesceConfig,
    /// `DASHBOARD_URL`: the dashboard's address, the base of the appeal links handed to
    /// plugins. Unset: the scheme and host each request came to.
    pub dashboard_url: Option<String>,
}

impl Config {
    /// Reads the settings from the environment.
    pub fn from_env() -> anyhow::Result<Config> {
        Config::from_vars(&Vars::process())
    }

    /// Reads the settings from `vars`: the one loader, for the binary and the tests alike.
    pub fn from_vars(vars: &Vars) -> anyhow::Result<Config> {
        Ok(Config {
            common: CommonConfig::from_vars(vars)?,
            admin_key: vars.admin_key()?,
            bind_addr: vars.or_default("BIND_ADDR", SocketAddr::from(([127, 0, 0, 1], 8081)))?,
            ip_hash_key: vars.required_secret("IP_HASH_KEY")?,
            privacy: PrivacyConfig::from_vars(vars)?,
            publish_timeout: Duration::from_millis(vars.or_default("PUBLISH_TIMEOUT_MS", 5000)?),
            max_writes_in_flight: vars.or_default("MAX_WRITES_IN_FLIGHT", 256usize)?.max(1),
            coalesce: coalesce_config(vars)?,
            dashboard_url: vars.optional_base_url("DASHBOARD_URL")?,
        })
    }
}

fn coalesce_config(vars: &Vars) -> Result<CoalesceConfig, ConfigError> {
    let defaults = CoalesceConfig::default();
    let enabled = match vars
        .or_default("INGEST_COALESCE", "on".to_owned())?
        .as_str()
    {
        "on" => true,
        "off" => false,
        other => {
            return Err(ConfigError::Invalid {
                name: "INGEST_COALESCE",
                reason: format!("{other:?} is neither on nor off"),
            });
        }
    };
    Ok(CoalesceConfig {
        enabled,
        max_records: vars
            .or_default("INGEST_COALESCE_MAX_RECORDS", defaults.max_records)?
            .clamp(1, defaults.max_records),
        max_bytes: vars
            .or_default("INGEST_COALESCE_MAX_BYTES", defaults.max_bytes)?
            .max(1),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_no_secret() -> anyhow::Result<()> {
        let config = Config::from_vars(
            &Vars::empty()
                .set("NATS_URL", "nats://warden:nats-pass-0451@nats:4222")
                .set("ADMIN_KEY", "wdn_admin_0123456789abcdef")
                .set("IP_HASH_KEY", "ip-hash-key-9f8e7d")
                .set("PRIVACY_MASTER_KEY", "privacy-master-key-0123456789abcdef"),
        )?;
        let shown = format!("{config:?} {config:#?}");
        for secret in [
            "nats-pass-0451",
            "wdn_admin_0123456789abcdef",
            "ip-hash-key-9f8e7d",
            "privacy-master-key-0123456789abcdef",
        ] {
            assert!(!shown.contains(secret), "{secret} printed in {shown}");
        }
        assert!(shown.contains("nats://warden:***@nats:4222"), "{shown}");
        Ok(())
    }

    fn with(name: &str, value: &str) -> anyhow::Result<Config> {
        Config::from_vars(
            &Vars::empty()
                .set("NATS_URL", "nats://nats:4222")
                .set("ADMIN_KEY", "wdn_admin_0123456789abcdef")
                .set("IP_HASH_KEY", "ip-hash-key-9f8e7d")
                .set("PRIVACY_MASTER_KEY", "privacy-master-key-0123456789abcdef")
                .set(name, value),
        )
    }

    #[test]
    fn coalescing_is_on_by_default_within_the_records_a_message_may_hold() -> anyhow::Result<()> {
        let config = with("UNRELATED", "x")?.coalesce;
        assert!(config.enabled);
        assert_eq!((config.max_records, config.max_bytes), (1000, 1024 * 1024));
        assert!(!with("INGEST_COALESCE", "off")?.coalesce.enabled);
        assert_eq!(
            with("INGEST_COALESCE_MAX_RECORDS", "5000")?
                .coalesce
                .max_records,
            1000
        );
        assert_eq!(
            with("INGEST_COALESCE_MAX_BYTES", "65536")?
                .coalesce
                .max_bytes,
            65536
        );
        let refused = with("INGEST_COALESCE", "sometimes").expect_err("refused");
        assert!(refused.to_string().contains("INGEST_COALESCE"), "{refused}");
        Ok(())
    }

    #[test]
    fn the_dashboard_url_is_optional_and_checked() -> anyhow::Result<()> {
        assert_eq!(with("UNRELATED", "x")?.dashboard_url, None);
        assert_eq!(
            with("DASHBOARD_URL", "https://warden.example.net/")?
                .dashboard_url
                .as_deref(),
            Some("https://warden.example.net")
        );
        let refused = with("DASHBOARD_URL", "warden.example.net").expect_err("refused");
        assert!(refused.to_string().contains("DASHBOARD_URL"), "{refused}");
        Ok(())
    }
}
