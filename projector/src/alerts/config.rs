//! The notifier's settings, read from the environment.

use super::delivery::DeliveryConfig;
use shared::alerts::AlertsConfig;
use shared::config::{CommonConfig, Vars};
use shared::privacy::PrivacyConfig;
use shared::secret::DatabaseUrl;
use std::net::SocketAddr;
use std::time::Duration;

/// Everything `projector notify` needs. `Debug` shows no secret.
#[derive(Debug, Clone)]
pub struct NotifierConfig {
    /// NATS, the event log and how the ops endpoints are served, shared with the other services.
    pub common: CommonConfig,
    /// `DATABASE_URL`: the database holding the rules, the outbox and the read models.
    pub database_url: DatabaseUrl,
    /// `BIND_ADDR` (default `127.0.0.1:8084`): where the ops endpoints listen.
    pub bind_addr: SocketAddr,
    /// `NOTIFIER_ENABLED` (default true): whether the all-in-one stack runs the notifier beside
    /// the projector (tests that run `projector notify` as a child process turn it off).
    pub enabled: bool,
    /// `NOTIFIER_BATCH_MAX` (default 500): log messages evaluated in one transaction at most.
    pub batch_max: usize,
    /// `NOTIFIER_BATCH_WAIT_MS` (default 10): how long a transaction waits for more messages
    /// after the first one arrives (short: every millisecond is notification latency).
    pub batch_wait: Duration,
    /// `NOTIFIER_SWEEP_MS` (default 2000): how often the clock's rules (a silent server, a
    /// long spell of low TPS) are checked while the evaluator is caught up.
    pub sweep_every: Duration,
    /// `WEBHOOK_SECRETS_KEY` and `WEBHOOK_ALLOW_NETWORKS`.
    pub alerts: AlertsConfig,
    /// The delivery workers' settings (`NOTIFIER_WORKERS`, timeouts, retries).
    pub delivery: DeliveryConfig,
    /// `PRIVACY_MASTER_KEY` (required): opens the personal fields sealed in the log, so
    /// notifications carry clear names (and an erased player's carry none).
    pub privacy: PrivacyConfig,
}

impl NotifierConfig {
    /// Reads the settings from the environment.
    pub fn from_env() -> anyhow::Result<NotifierConfig> {
        NotifierConfig::from_vars(&Vars::process())
    }

    /// Reads the settings from `vars`: the one loader, for the binary, the stack and the tests.
    pub fn from_vars(vars: &Vars) -> anyhow::Result<NotifierConfig> {
        let batch_max: usize = vars.or_default("NOTIFIER_BATCH_MAX", 500)?;
        anyhow::ensure!(
            batch_max > 0,
            "environment variable NOTIFIER_BATCH_MAX must be at least 1"
        );
        let sweep_ms: u64 = vars.or_default("NOTIFIER_SWEEP_MS", 2_000)?;
        anyhow::ensure!(
            sweep_ms > 0,
            "environment variable NOTIFIER_SWEEP_MS must be at least 1"
        );
        Ok(NotifierConfig {
            common: CommonConfig::from_vars(vars)?,
            database_url: vars.required_url("DATABASE_URL")?,
            bind_addr: vars.or_default("BIND_ADDR", SocketAddr::from(([127, 0, 0, 1], 8084)))?,
            enabled: vars.or_default("NOTIFIER_ENABLED", true)?,
            batch_max,
            batch_wait: Duration::from_millis(vars.or_default("NOTIFIER_BATCH_WAIT_MS", 10)?),
            sweep_every: Duration::from_millis(sweep_ms),
            alerts: AlertsConfig::from_vars(vars)?,
            delivery: DeliveryConfig::from_vars(vars)?,
            privacy: PrivacyConfig::from_vars(vars)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars() -> Vars {
        Vars::empty()
            .set("DATABASE_URL", "postgres://n:pg-pass-9a@db:5432/warden")
            .set(
                "WEBHOOK_SECRETS_KEY",
                "sealing-key-b8-0123456789abcdefghijklmnop",
            )
            .set(
                "PRIVACY_MASTER_KEY",
                "privacy-master-c4-0123456789abcdefghij",
            )
    }

    #[test]
    fn defaults_enabled_on_port_8084_and_debug_shows_no_secret() -> anyhow::Result<()> {
        let config = NotifierConfig::from_vars(&vars())?;
        assert!(config.enabled);
        assert_eq!(config.bind_addr, SocketAddr::from(([127, 0, 0, 1], 8084)));
        assert_eq!(config.sweep_every, Duration::from_secs(2));
        let shown = format!("{config:?}");
        for secret in ["pg-pass-9a", "sealing-key-b8", "privacy-master-c4"] {
            assert!(!shown.contains(secret), "{secret} printed in {shown}");
        }
        Ok(())
    }

    #[test]
    fn the_stack_can_turn_it_off_and_nonsense_is_refused() -> anyhow::Result<()> {
        let off = NotifierConfig::from_vars(&vars().set("NOTIFIER_ENABLED", "false"))?;
        assert!(!off.enabled);
        assert!(NotifierConfig::from_vars(&vars().set("NOTIFIER_ENABLED", "maybe")).is_err());
        assert!(NotifierConfig::from_vars(&vars().set("NOTIFIER_SWEEP_MS", 0)).is_err());
        assert!(NotifierConfig::from_vars(&vars().set("NOTIFIER_BATCH_MAX", 0)).is_err());
        Ok(())
    }
}
