//! The service's settings, read from the environment.

use shared::config::{CommonConfig, ConfigError, or_default, required};
use shared::rate_limit::TrustedProxy;
use std::net::SocketAddr;

/// Where query-api listens and what it connects to.
#[derive(Clone)]
pub struct Config {
    /// NATS, the event log, the key bucket and the admin key.
    pub common: CommonConfig,
    /// `BIND_ADDR` (default `127.0.0.1:8082`); port 0 picks a free port.
    pub bind_addr: SocketAddr,
    /// `DATABASE_URL`: the PostgreSQL the projector writes.
    pub database_url: String,
    /// `READ_DATABASE_URL`: optional streaming replica for dashboard and events reads. A
    /// replica trails the primary by its replication lag, on top of the projector's.
    pub read_database_url: Option<String>,
    /// `TRUSTED_PROXIES`: comma-separated addresses or CIDRs whose `X-Forwarded-For` names
    /// the client for the public quota (default none: the socket peer is the client).
    pub trusted_proxies: Vec<TrustedProxy>,
    /// `FUNNEL_PARALLELISM` (default 2, 1..=8): how many connections, and so PostgreSQL cores,
    /// one funnel reads with.
    pub funnel_parallelism: usize,
    /// `MAX_STREAMS_PER_KEY` (default 20, 1..=10000): how many live event streams one key may
    /// hold open at once in this process.
    pub max_streams_per_key: usize,
}

/// The default listen address.
pub const DEFAULT_BIND_ADDR: SocketAddr =
    SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 8082);

impl Config {
    /// Reads `BIND_ADDR`, `DATABASE_URL` and the shared settings (`NATS_URL`, `ADMIN_KEY`, ...).
    pub fn from_env() -> anyhow::Result<Config> {
        Ok(Config {
            common: CommonConfig::from_env()?,
            bind_addr: or_default("BIND_ADDR", DEFAULT_BIND_ADDR)?,
            database_url: required("DATABASE_URL")?,
            read_database_url: std::env::var("READ_DATABASE_URL")
                .ok()
                .filter(|url| !url.is_empty()),
            trusted_proxies: trusted_proxies()?,
            funnel_parallelism: funnel_parallelism()?,
            max_streams_per_key: max_streams_per_key()?,
        })
    }
}

fn funnel_parallelism() -> Result<usize, ConfigError> {
    let parallelism: usize = or_default("FUNNEL_PARALLELISM", 2)?;
    if (1..=8).contains(&parallelism) {
        Ok(parallelism)
    } else {
        Err(ConfigError::Invalid {
            name: "FUNNEL_PARALLELISM",
            reason: "must be 1 to 8".to_owned(),
        })
    }
}

fn max_streams_per_key() -> Result<usize, ConfigError> {
    let max: usize = or_default(
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

fn trusted_proxies() -> Result<Vec<TrustedProxy>, ConfigError> {
    let list: String = or_default("TRUSTED_PROXIES", String::new())?;
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

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The database URL may carry a password.
        f.debug_struct("Config")
            .field("common", &self.common)
            .field("bind_addr", &self.bind_addr)
            .field("database_url", &"<redacted>")
            .field("trusted_proxies", &self.trusted_proxies)
            .field("funnel_parallelism", &self.funnel_parallelism)
            .field("max_streams_per_key", &self.max_streams_per_key)
            .finish()
    }
}
