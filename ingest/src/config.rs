//! Ingest settings, from the environment.

use shared::config::{CommonConfig, or_default, required};
use std::net::SocketAddr;
use std::time::Duration;

/// Everything ingest needs to run.
#[derive(Clone)]
pub struct Config {
    /// NATS, the event log and the admin key.
    pub common: CommonConfig,
    /// `BIND_ADDR` (default `127.0.0.1:8081`); port 0 picks a free port.
    pub bind_addr: SocketAddr,
    /// `IP_HASH_KEY`: secret for the keyed hash of player IPs.
    pub ip_hash_key: String,
    /// `PUBLISH_TIMEOUT_MS` (default 5000): how long a write waits for JetStream's ack.
    pub publish_timeout: Duration,
    /// `MAX_WRITES_IN_FLIGHT` (default 256): authenticated writes decoded and awaiting their
    /// ack at once; more wait, unread, for a slot. Bounds memory under any number of clients
    /// (each write holds its body, records and log message, ~70 KiB for 100 chat lines).
    pub max_writes_in_flight: usize,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("common", &self.common)
            .field("bind_addr", &self.bind_addr)
            .field("ip_hash_key", &"<redacted>")
            .field("publish_timeout", &self.publish_timeout)
            .field("max_writes_in_flight", &self.max_writes_in_flight)
            .finish()
    }
}

impl Config {
    /// Reads the settings from the environment.
    pub fn from_env() -> anyhow::Result<Config> {
        Ok(Config {
            common: CommonConfig::from_env()?,
            bind_addr: or_default("BIND_ADDR", SocketAddr::from(([127, 0, 0, 1], 8081)))?,
            ip_hash_key: required("IP_HASH_KEY")?,
            publish_timeout: Duration::from_millis(or_default("PUBLISH_TIMEOUT_MS", 5000)?),
            max_writes_in_flight: or_default("MAX_WRITES_IN_FLIGHT", 256usize)?.max(1),
        })
    }
}
