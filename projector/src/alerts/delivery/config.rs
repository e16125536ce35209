//! The delivery workers' settings, read from the environment.

use shared::config::Vars;
use std::time::Duration;

/// How the delivery workers send the outbox: concurrency, timeouts, the retry schedule and when
/// a failing destination is disabled.
#[derive(Debug, Clone)]
pub struct DeliveryConfig {
    /// `NOTIFIER_WORKERS` (default 16): attempts in flight at once, across all destinations.
    pub workers: usize,
    /// `NOTIFIER_CONNECT_TIMEOUT_MS` (default 5000): time to open a connection (TCP + TLS).
    pub connect_timeout: Duration,
    /// `NOTIFIER_TIMEOUT_MS` (default 10000): time for a whole attempt, connect to last byte.
    pub timeout: Duration,
    /// `NOTIFIER_RETRY_BASE_MS` (default 5000): the wait after a first failed attempt; it doubles
    /// with each further one.
    pub retry_base: Duration,
    /// `NOTIFIER_RETRY_MAX_MS` (default 3600000): the longest wait between two attempts.
    pub retry_max: Duration,
    /// `NOTIFIER_DISABLE_AFTER_HOURS` (default 72): a destination failing without a single
    /// success for this long is disabled.
    pub disable_after: Duration,
    /// How long a claimed delivery stays reserved for the worker that claimed it (the request
    /// timeout plus a margin to record the outcome). A worker killed mid-attempt leaves the
    /// lease to run out, then the delivery is claimed again with the same id.
    pub lease: Duration,
    /// How often the outbox is polled when no notification wakes the workers.
    pub poll_interval: Duration,
}

/// Time beyond the request timeout to record an attempt before its lease runs out.
const LEASE_MARGIN: Duration = Duration::from_secs(5);

impl DeliveryConfig {
    /// Reads the settings from `vars`; zero workers or a zero timeout is an error.
    pub fn from_vars(vars: &Vars) -> anyhow::Result<Self> {
        let workers: usize = vars.or_default("NOTIFIER_WORKERS", 16)?;
        anyhow::ensure!(
            (1..=1024).contains(&workers),
            "environment variable NOTIFIER_WORKERS must be between 1 and 1024"
        );
        let millis = |name: &'static str, default: u64| -> anyhow::Result<Duration> {
            let value: u64 = vars.or_default(name, default)?;
            anyhow::ensure!(value > 0, "environment variable {name} must be at least 1");
            Ok(Duration::from_millis(value))
        };
        let connect_timeout = millis("NOTIFIER_CONNECT_TIMEOUT_MS", 5_000)?;
        let timeout = millis("NOTIFIER_TIMEOUT_MS", 10_000)?;
        let retry_base = millis("NOTIFIER_RETRY_BASE_MS", 5_000)?;
        let retry_max = millis("NOTIFIER_RETRY_MAX_MS", 3_600_000)?;
        anyhow::ensure!(
            retry_base <= retry_max,
            "environment variable NOTIFIER_RETRY_BASE_MS must not exceed NOTIFIER_RETRY_MAX_MS"
        );
        let hours: u64 = vars.or_default("NOTIFIER_DISABLE_AFTER_HOURS", 72)?;
        anyhow::ensure!(
            (1..=24 * 365).contains(&hours),
            "environment variable NOTIFIER_DISABLE_AFTER_HOURS must be between 1 and 8760"
        );
        Ok(DeliveryConfig {
            workers,
            connect_timeout,
            timeout,
            retry_base,
            retry_max,
            disable_after: Duration::from_secs(hours * 3600),
            lease: timeout + LEASE_MARGIN,
            poll_interval: Duration::from_secs(1),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_the_design() -> anyhow::Result<()> {
        let config = DeliveryConfig::from_vars(&Vars::empty())?;
        assert_eq!(config.workers, 16);
        assert_eq!(config.connect_timeout, Duration::from_secs(5));
        assert_eq!(config.timeout, Duration::from_secs(10));
        assert_eq!(config.retry_base, Duration::from_secs(5));
        assert_eq!(config.retry_max, Duration::from_secs(3600));
        assert_eq!(config.disable_after, Duration::from_secs(72 * 3600));
        assert!(config.lease > config.timeout);
        Ok(())
    }

    #[test]
    fn nonsense_is_refused() {
        for (name, value) in [
            ("NOTIFIER_WORKERS", "0"),
            ("NOTIFIER_TIMEOUT_MS", "0"),
            ("NOTIFIER_RETRY_BASE_MS", "7200000"),
            ("NOTIFIER_DISABLE_AFTER_HOURS", "0"),
            ("NOTIFIER_CONNECT_TIMEOUT_MS", "soon"),
        ] {
            let vars = Vars::empty().set(name, value);
            assert!(
                DeliveryConfig::from_vars(&vars).is_err(),
                "{name}={value} accepted"
            );
        }
    }
}
