//! The service's settings, read from the environment.

use shared::config::{CommonConfig, ConfigError, Vars};
use shared::rate_limit::TrustedProxy;
use shared::secret::{DatabaseUrl, SecretString};
use std::net::SocketAddr;

/// Where query-api listens and what it connects to. `Debug` shows no secret (keys and URL
/// passwords redacted).
#[derive(Debug, Clone)]
pub struct Config {
    /// NATS, the event log, the key bucket and how HTTP is served.
    pub common: CommonConfig,
    /// `ADMIN_KEY`: the operator's secret for the admin API.
    pub admin_key: SecretString,
    /// `BIND_ADDR` (default `127.0.0.1:8082`); port 0 picks a free port.
    pub bind_addr: SocketAddr,
    /// `DATABASE_URL`: the PostgreSQL the projector writes.
    pub database_url: DatabaseUrl,
    /// `READ_DATABASE_URL`: optional streaming replica for dashboard and events reads. A
    /// replica trails the primary by its replication lag, on top of the projector's.
    pub read_database_url: Option<DatabaseUrl>,
    /// `TRUSTED_PROXIES`: comma-separated addresses or CIDRs whose `X-Forwarded-For` names
    /// the client for the public quota (default none: the socket peer is the client).
    pub trusted_proxies: Vec<TrustedProxy>,
    /// `FUNNEL_PARALLELISM` (default 2, 1..=8): how many connections, and so PostgreSQL cores,
    /// one funnel reads with.
    pub funnel_parallelism: usize,
    /// `MAX_STREAMS_PER_KEY` (default 20, 1..=10000): how many live event streams one key may
    /// hold open at once in this process.
    pub max_streams_per_key: usize,
    /// `SLOW_QUERY_MS` (default 200; 0: never): a SQL statement that takes at least this long
    /// is logged at `warn` with its text, inside the `request` span that names the route.
    pub slow_query: std::time::Duration,
    /// `CHAT_SEARCH_BUDGET_MS` (default 300, 0..=60000): how long a chat keyword search over
    /// the whole account reads before it answers with what it found (0: one window, the last
    /// day before its position, per page).
    pub chat_search_budget: std::time::Duration,
    /// The staff dashboard's sessions and audit log (`SESSION_*`, `COOKIE_SECURE`,
    /// `IP_HASH_KEY`).
    pub dashboard: DashboardConfig,
    /// Alerts: `WEBHOOK_SECRETS_KEY` (optional here: without it webhook destinations cannot be
    /// added) and `WEBHOOK_ALLOW_NETWORKS`.
    pub alerts: shared::alerts::AlertsConfig,
    /// `PRIVACY_MASTER_KEY` (required): seals notes, opens the log's personal fields for the
    /// live stream, and destroys keys to erase a player.
    pub privacy: shared::privacy::PrivacyConfig,
}

/// How the staff dashboard signs people in and records what they do.
#[derive(Clone, Default)]
pub struct DashboardConfig {
    /// `SESSION_IDLE_SECONDS` (default 43200), `SESSION_ABSOLUTE_SECONDS` (default 604800),
    /// `COOKIE_SECURE` (default true).
    pub sessions: crate::team::sessions::SessionPolicy,
    /// `IP_HASH_KEY`: the key of the audit log's IP hashes (the same secret ingest hashes
    /// player IPs with). Optional here: without it each process uses a random key, and hashes
    /// then compare only within one process's lifetime.
    pub ip_hash_key: Option<SecretString>,
    /// What the "Connect a server" page hands to a game server.
    pub plugin: PluginSetup,
}

/// What the "Connect a server" page (`/connect`) offers.
#[derive(Debug, Clone, Default)]
pub struct PluginSetup {
    /// `PLUGIN_BASE_URL`: the address game servers reach Warden's plugin endpoints at, written
    /// into the `config.yml` the page shows. Unset: the address the dashboard was opened at.
    pub base_url: Option<String>,
    /// `PLUGIN_JAR`: the plugin jar the page offers for download. Unset: no download, the page
    /// says how to build it.
    pub jar: Option<std::path::PathBuf>,
}

impl PluginSetup {
    /// Reads `PLUGIN_BASE_URL` (an http or https URL, kept without a trailing `/`) and
    /// `PLUGIN_JAR`.
    pub fn from_vars(vars: &Vars) -> Result<PluginSetup, ConfigError> {
        let base_url = vars.optional_base_url("PLUGIN_BASE_URL")?;
        let jar = vars
            .get("PLUGIN_JAR")
            .filter(|v| !v.trim().is_empty())
            .map(std::path::PathBuf::from);
        Ok(PluginSetup { base_url, jar })
    }
}

impl DashboardConfig {
    /// Reads the dashboard's settings from `vars`.
    pub fn from_vars(vars: &Vars) -> Result<DashboardConfig, ConfigError> {
        let defaults = crate::team::sessions::SessionPolicy::default();
        let seconds = |name: &'static str, default: std::time::Duration| {
            let secs: u64 = vars.or_default(name, default.as_secs())?;
            if (60..=365 * 24 * 3600).contains(&secs) {
                Ok(std::time::Duration::from_secs(secs))
            } else {
                Err(ConfigError::Invalid {
                    name,
                    reason: "must be 60 to 31536000 seconds".to_owned(),
                })
            }
        };
        Ok(DashboardConfig {
            sessions: crate::team::sessions::SessionPolicy {
                idle: seconds("SESSION_IDLE_SECONDS", defaults.idle)?,
                absolute: seconds("SESSION_ABSOLUTE_SECONDS", defaults.absolute)?,
                cookie_secure: vars.or_default("COOKIE_SECURE", true)?,
            },
            ip_hash_key: vars.optional_secret("IP_HASH_KEY"),
            plugin: PluginSetup::from_vars(vars)?,
        })
    }
}

impl std::fmt::Debug for DashboardConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DashboardConfig")
            .field("sessions", &self.sessions)
            .field(
                "ip_hash_key",
                &self.ip_hash_key.as_ref().map(|_| "<redacted>"),
            )
            .field("plugin", &self.plugin)
            .finish()
    }
}

/// The default listen address.
pub const DEFAULT_BIND_ADDR: SocketAddr =
    SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 8082);

impl Config {
    /// Reads `BIND_ADDR`, `DATABASE_URL` and the shared settings (`NATS_URL`, `ADMIN_KEY`, ...)
    /// from the environment.
    pub fn from_env() -> anyhow::Result<Config> {
        Config::from_vars(&Vars::process())
    }

    /// Reads the settings from `vars`: the one loader, for the binary and the tests alike.
    pub fn from_vars(vars: &Vars) -> anyhow::Result<Config> {
        Ok(Config {
            common: CommonConfig::from_vars(vars)?,
            admin_key: vars.admin_key()?,
            bind_addr: vars.or_default("BIND_ADDR", DEFAULT_BIND_ADDR)?,
            database_url: vars.required_url("DATABASE_URL")?,
            read_database_url: vars.optional_url("READ_DATABASE_URL"),
            trusted_proxies: trusted_proxies(vars)?,
            funnel_parallelism: funnel_parallelism(vars)?,
            max_streams_per_key: max_streams_per_key(vars)?,
            slow_query: std::time::Duration::from_millis(vars.or_default("SLOW_QUERY_MS", 200)?),
            chat_search_budget: chat_search_budget(vars)?,
            dashboard: DashboardConfig::from_vars(vars)?,
            alerts: shared::alerts::AlertsConfig::from_vars(vars)?,
            privacy: shared::privacy::PrivacyConfig::from_vars(vars)?,
        })
    }
}

fn funnel_parallelism(vars: &Vars) -> Result<usize, ConfigError> {
    let parallelism: usize = vars.or_default("FUNNEL_PARALLELISM", 2)?;
    if (1..=8).contains(&parallelism) {
        Ok(parallelism)
    } else {
        Err(ConfigError::Invalid {
            name: "FUNNEL_PARALLELISM",
            reason: "must be 1 to 8".to_owned(),
        })
    }
}

fn chat_search_budget(vars: &Vars) -> Result<std::time::Duration, ConfigError> {
    let default = crate::routes::account_reads::keyword_search::DEFAULT_BUDGET;
    let ms: u64 = vars.or_default("CHAT_SEARCH_BUDGET_MS", default.as_millis() as u64)?;
    if ms <= 60_000 {
        Ok(std::time::Duration::from_millis(ms))
    } else {
        Err(ConfigError::Invalid {
            name: "CHAT_SEARCH_BUDGET_MS",
            reason: "must be 0 to 60000".to_owned(),
        })
    }
}

fn max_streams_per_key(vars: &Vars) -> Result<usize, ConfigError> {
    let max: usize = vars.or_default(
        "MAX_STREAMS_PER_KEY",
        crate::open_streams::DEFAULT_MAX_STREAMS_PER_KEY,
    )?;
    if (1..=10_000).contains(&max) {
        Ok(max)
    } else {
        Err(ConfigError::Invalid {
            name: "MAX_STREAMS_PER_KEY",
            reason: "must be 1 to 10000".to_owned(),
        })
    }
}

fn trusted_proxies(vars: &Vars) -> Result<Vec<TrustedProxy>, ConfigError> {
    let list: String = vars.or_default("TRUSTED_PROXIES", String::new())?;
    list.split(',')
        .filter(|item| !item.trim().is_empty())
        .map(|item| {
            item.parse().map_err(|reason| ConfigError::Invalid {
                name: "TRUSTED_PROXIES",
                reason,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_no_secret() -> anyhow::Result<()> {
        let config = Config::from_vars(
            &Vars::empty()
                .set("NATS_URL", "nats://query:nats-pass-2718@nats:4222")
                .set("ADMIN_KEY", "wdn_admin_fedcba9876543210")
                .set("DATABASE_URL", "postgres://query:pg-pass-1618@db/warden")
                .set(
                    "READ_DATABASE_URL",
                    "postgres://reader@replica/warden?password=replica-pass-1414",
                )
                .set("IP_HASH_KEY", "audit-ip-key-5a5a")
                .set("PRIVACY_MASTER_KEY", "privacy-master-key-0123456789abcdef"),
        )?;
        let shown = format!("{config:?} {config:#?}");
        for secret in [
            "nats-pass-2718",
            "wdn_admin_fedcba9876543210",
            "pg-pass-1618",
            "replica-pass-1414",
            "audit-ip-key-5a5a",
            "privacy-master-key-0123456789abcdef",
        ] {
            assert!(!shown.contains(secret), "{secret} printed in {shown}");
        }
        assert!(shown.contains("replica/warden?password=***"), "{shown}");
        Ok(())
    }
}
