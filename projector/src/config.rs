//! The projector's settings, read from the environment.

use shared::config::{CommonConfig, Vars};
use shared::privacy::PrivacyConfig;
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
    /// `PROJECTOR_BATCH_MAX` (default 500): log messages in one chunk at most (each read model
    /// applies a chunk in one transaction).
    pub batch_max: usize,
    /// `PROJECTOR_CHUNK_MAX_BYTES` (default 1 MiB): a chunk holding more log-message bytes is
    /// applied in several, each at most this big (at least one message each). Keeps every
    /// model transaction short, so a partition with one busy account (chunks of 500 chat
    /// batches) does not hold the process's transaction slots for seconds while a quiet
    /// partition's write waits for one.
    pub chunk_max_bytes: usize,
    /// `PROJECTOR_READ_AHEAD_BYTES` (default 4 MiB): how many bytes of log messages each
    /// partition's reader asks the server for at once, ahead of what it applies; it holds at
    /// most one and a half times this. Raised to the server's `max_payload` (plus a little)
    /// when that is more: a pull must be able to bring the largest message.
    pub read_ahead_bytes: usize,
    /// `PROJECTOR_REBUILD_CHUNK_MESSAGES` (default 4,000): a rebuild joins the consumer's
    /// chunks into chunks of up to this many log messages (at least one consumer chunk): fewer
    /// transactions, and the folds that read a row once per chunk (players, sessions) do so
    /// less often. A partition whose backlog is under 16 such chunks gets chunks of a 16th of
    /// it (its load's progress moves in small steps). A partition holds up to three chunks in
    /// memory while they are applied.
    pub rebuild_chunk_messages: usize,
    /// `PROJECTOR_REBUILD_CHUNK_BYTES` (default 8 MiB): a rebuild's chunk stops growing once
    /// its log messages hold this many bytes, whatever their number.
    pub rebuild_chunk_bytes: usize,
    /// `PROJECTOR_REBUILD_KEPT_PLAYERS` (default 100,000): players whose rows a rebuild keeps
    /// in memory between its chunks (and name spans, twice as many), rather than reading them
    /// back from its copy at every chunk. Past it the rebuild reads the others back: slower
    /// on a log with more players, never different.
    pub rebuild_kept_players: usize,
    /// `PROJECTOR_BATCH_WAIT_MS` (default 20): how long a transaction waits for more messages
    /// after the first one arrives.
    pub batch_wait: Duration,
    /// `PROJECTOR_APPLY_CONCURRENCY` (default 4): read-model transactions at once in this
    /// process, across every partition it holds, each on its own PostgreSQL connection (the
    /// pool is sized for it: [`crate::startup`]).
    /// Measured catching up on 60k records on 2 cores: 1 took ~1.25x as long as 4, and 6 or
    /// 10 were no faster than 4 (the timeline and chat models dominate).
    pub apply_concurrency: usize,
    /// `PROJECTOR_STALL_SECONDS` (default 60): no progress for this long while log messages
    /// wait makes the `projector_lag` readiness check fail (the projector is stuck).
    pub stall_after: Duration,
    /// `PRIVACY_MASTER_KEY` (required): opens the personal fields sealed in the log.
    pub privacy: PrivacyConfig,
    /// `RETENTION_SWEEP_SECS` (default 600): how often the process holding partition 0 removes
    /// rows past their accounts' retention (and once at start).
    pub retention_sweep_every: Duration,
}

impl Config {
    /// Reads the settings from the environment; a missing `DATABASE_URL` is an error.
    pub fn from_env() -> anyhow::Result<Config> {
        Config::from_vars(&Vars::process())
    }

    /// Reads the settings from `vars`: the one loader, for the binary and the tests alike.
    pub fn from_vars(vars: &Vars) -> anyhow::Result<Config> {
        let batch_max: usize = vars.or_default("PROJECTOR_BATCH_MAX", 500)?;
        anyhow::ensure!(
            batch_max > 0,
            "environment variable PROJECTOR_BATCH_MAX must be at least 1"
        );
        let apply_concurrency: usize = vars.or_default("PROJECTOR_APPLY_CONCURRENCY", 4)?;
        anyhow::ensure!(
            apply_concurrency > 0,
            "environment variable PROJECTOR_APPLY_CONCURRENCY must be at least 1"
        );
        let rebuild_chunk_messages: usize =
            vars.or_default("PROJECTOR_REBUILD_CHUNK_MESSAGES", 4_000)?;
        anyhow::ensure!(
            rebuild_chunk_messages > 0,
            "environment variable PROJECTOR_REBUILD_CHUNK_MESSAGES must be at least 1"
        );
        let read_ahead_bytes: usize = vars.or_default("PROJECTOR_READ_AHEAD_BYTES", 4 << 20)?;
        anyhow::ensure!(
            read_ahead_bytes > 0,
            "environment variable PROJECTOR_READ_AHEAD_BYTES must be at least 1"
        );
        let rebuild_chunk_bytes: usize =
            vars.or_default("PROJECTOR_REBUILD_CHUNK_BYTES", 8 << 20)?;
        anyhow::ensure!(
            rebuild_chunk_bytes > 0,
            "environment variable PROJECTOR_REBUILD_CHUNK_BYTES must be at least 1"
        );
        let retention_sweep_secs: u64 = vars.or_default("RETENTION_SWEEP_SECS", 600)?;
        anyhow::ensure!(
            retention_sweep_secs > 0,
            "environment variable RETENTION_SWEEP_SECS must be at least 1"
        );
        Ok(Config {
            common: CommonConfig::from_vars(vars)?,
            database_url: vars.required_url("DATABASE_URL")?,
            bind_addr: vars.or_default("BIND_ADDR", SocketAddr::from(([127, 0, 0, 1], 8083)))?,
            batch_max,
            chunk_max_bytes: vars.or_default("PROJECTOR_CHUNK_MAX_BYTES", 1 << 20)?,
            read_ahead_bytes,
            rebuild_chunk_messages,
            rebuild_chunk_bytes,
            rebuild_kept_players: vars.or_default("PROJECTOR_REBUILD_KEPT_PLAYERS", 100_000)?,
            batch_wait: Duration::from_millis(vars.or_default("PROJECTOR_BATCH_WAIT_MS", 20)?),
            apply_concurrency,
            stall_after: Duration::from_secs(vars.or_default("PROJECTOR_STALL_SECONDS", 60)?),
            privacy: PrivacyConfig::from_vars(vars)?,
            retention_sweep_every: Duration::from_secs(retention_sweep_secs),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apply_concurrency_defaults_to_4_and_must_be_at_least_1() -> anyhow::Result<()> {
        let vars = Vars::empty()
            .set("DATABASE_URL", "postgres://projector@db:5432/warden")
            .set("PRIVACY_MASTER_KEY", "privacy-master-key-0123456789abcdef");
        assert_eq!(Config::from_vars(&vars)?.apply_concurrency, 4);
        let two = vars.clone().set("PROJECTOR_APPLY_CONCURRENCY", "2");
        assert_eq!(Config::from_vars(&two)?.apply_concurrency, 2);
        let zero = vars.set("PROJECTOR_APPLY_CONCURRENCY", "0");
        let error = Config::from_vars(&zero).expect_err("0 is refused");
        assert!(
            error.to_string().contains("PROJECTOR_APPLY_CONCURRENCY"),
            "{error}"
        );
        Ok(())
    }

    #[test]
    fn debug_shows_no_secret() -> anyhow::Result<()> {
        let config = Config::from_vars(
            &Vars::empty()
                .set("NATS_URL", "nats://nats-token-77aa@nats:4222")
                .set(
                    "DATABASE_URL",
                    "postgres://projector:pg-pass-3141@db:5432/warden",
                )
                .set("PRIVACY_MASTER_KEY", "privacy-master-key-0123456789abcdef"),
        )?;
        let shown = format!("{config:?} {config:#?}");
        for secret in ["nats-token-77aa", "pg-pass-3141"] {
            assert!(!shown.contains(secret), "{secret} printed in {shown}");
        }
        assert!(
            shown.contains("postgres://projector:***@db:5432/warden"),
            "{shown}"
        );
        Ok(())
    }
}
