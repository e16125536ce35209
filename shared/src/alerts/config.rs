//! `WEBHOOK_SECRETS_KEY` and `WEBHOOK_ALLOW_NETWORKS`, read the same way by query-api (which
//! seals new secrets and checks URLs) and the notifier (which opens secrets and checks every
//! address it connects to).

use super::destinations::NetworkPolicy;
use super::sealing::SealingKey;
use crate::config::{ConfigError, Vars};

/// The alerts settings.
#[derive(Debug, Clone, Default)]
pub struct AlertsConfig {
    /// `WEBHOOK_SECRETS_KEY` (at least 32 characters): seals webhook signing secrets at rest.
    /// Optional for query-api (without it, creating a webhook destination answers 503
    /// `alerts_not_configured`); the notifier requires it ([`AlertsConfig::require_sealing_key`]).
    pub sealing_key: Option<SealingKey>,
    /// `WEBHOOK_ALLOW_NETWORKS`: the private ranges destinations may reach (default none).
    pub networks: NetworkPolicy,
}

impl AlertsConfig {
    /// Reads the alerts settings from `vars`.
    pub fn from_vars(vars: &Vars) -> Result<AlertsConfig, ConfigError> {
        let sealing_key = vars
            .optional_secret("WEBHOOK_SECRETS_KEY")
            .map(|secret| {
                SealingKey::new(secret.expose()).map_err(|e| ConfigError::Invalid {
                    name: "WEBHOOK_SECRETS_KEY",
                    reason: e.to_string(),
                })
            })
            .transpose()?;
        Ok(AlertsConfig {
            sealing_key,
            networks: NetworkPolicy::from_vars(vars)?,
        })
    }

    /// The sealing key, for a process that cannot work without it (the notifier).
    pub fn require_sealing_key(&self) -> Result<&SealingKey, ConfigError> {
        self.sealing_key
            .as_ref()
            .ok_or(ConfigError::Missing("WEBHOOK_SECRETS_KEY"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::IpAddr;

    #[test]
    fn nothing_set_means_no_key_and_no_private_networks() {
        let config = AlertsConfig::from_vars(&Vars::empty()).expect("defaults");
        assert!(config.sealing_key.is_none());
        assert!(config.require_sealing_key().is_err());
        let loopback: IpAddr = "127.0.0.1".parse().expect("ip");
        assert!(config.networks.check_ip(loopback).is_err());
    }

    #[test]
    fn reads_both_settings() {
        let vars = Vars::empty()
            .set("WEBHOOK_SECRETS_KEY", "k".repeat(64))
            .set("WEBHOOK_ALLOW_NETWORKS", "loopback, 10.1.0.0/16");
        let config = AlertsConfig::from_vars(&vars).expect("valid");
        let key = config.require_sealing_key().expect("key");
        assert_eq!(key.open(b"a", &key.seal(b"a", "s")).as_deref(), Ok("s"));
        for ip in ["127.0.0.1", "10.1.2.3"] {
            let ip: IpAddr = ip.parse().expect("ip");
            assert_eq!(config.networks.check_ip(ip), Ok(()), "{ip}");
        }
        let other: IpAddr = "10.2.0.1".parse().expect("ip");
        assert!(config.networks.check_ip(other).is_err());
    }

    #[test]
    fn refuses_a_short_key_and_a_bad_network() {
        let short = Vars::empty().set("WEBHOOK_SECRETS_KEY", "too-short");
        let err = AlertsConfig::from_vars(&short).expect_err("short key");
        assert!(err.to_string().contains("WEBHOOK_SECRETS_KEY"), "{err}");
        let bad = Vars::empty().set("WEBHOOK_ALLOW_NETWORKS", "intranet");
        let err = AlertsConfig::from_vars(&bad).expect_err("bad network");
        assert!(err.to_string().contains("WEBHOOK_ALLOW_NETWORKS"), "{err}");
        // The debug form never shows the key.
        let keyed = Vars::empty().set("WEBHOOK_SECRETS_KEY", "s3cr3t".repeat(8));
        let config = AlertsConfig::from_vars(&keyed).expect("valid");
        assert!(!format!("{config:?}").contains("s3cr3t"));
    }
}
