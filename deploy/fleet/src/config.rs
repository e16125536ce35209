//! Command-line and environment settings of the fleet.

use clap::Parser;
use std::path::PathBuf;
use std::time::Duration;

/// A simulated network of game servers writing to the plugin API with a plugin key.
#[derive(Debug, Clone, Parser)]
#[command(name = "demo-fleet", version, about)]
pub struct Config {
    /// Base URL of the Warden service.
    #[arg(long, env = "BASE_URL", default_value = "http://127.0.0.1:8080")]
    pub base_url: String,

    /// Plugin key (`wdn_plugin_…`) of the account to write to.
    #[arg(long, env = "PLUGIN_KEY", hide_env_values = true)]
    pub plugin_key: String,

    /// Number of simulated game servers.
    #[arg(long, env = "FLEET_SERVERS", default_value_t = 3,
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub servers: u32,

    /// Number of players in the network (shared by all servers).
    #[arg(long, env = "FLEET_PLAYERS", default_value_t = 40,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub players: u32,

    /// Seconds between a server's heartbeats and chat flushes (the plugin's sync cycle).
    #[arg(long, env = "FLEET_SYNC_INTERVAL_SECS", default_value_t = 15,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub sync_interval_secs: u64,

    /// Multiplies every activity rate (2.0 = twice as busy).
    #[arg(long, env = "FLEET_SPEED", default_value_t = 1.0, value_parser = parse_speed)]
    pub speed: f64,

    /// Stop after this many seconds (default: run until Ctrl-C or SIGTERM).
    #[arg(long, env = "FLEET_DURATION_SECS")]
    pub duration_secs: Option<u64>,

    /// Seed for the activity's random choices, for reproducible runs.
    #[arg(long, env = "FLEET_SEED")]
    pub seed: Option<u64>,

    /// Before going live, backfill this many days of past sessions, chat, flags, punishments
    /// and custom events (retention and trend charts); 0 for none.
    #[arg(long, env = "FLEET_HISTORY_DAYS", default_value_t = 0,
          value_parser = clap::value_parser!(u32).range(0..=i64::from(crate::history::MAX_DAYS)))]
    pub history_days: u32,

    /// With --history-days: skip the backfill when this file exists, and create it once the
    /// backfill was stored, so a restart does not send the history again.
    #[arg(long, env = "FLEET_HISTORY_MARKER")]
    pub history_marker: Option<PathBuf>,
}

impl Config {
    /// The sync interval as a duration.
    pub fn sync_interval(&self) -> Duration {
        Duration::from_secs(self.sync_interval_secs)
    }

    /// How long to run, when bounded.
    pub fn duration(&self) -> Option<Duration> {
        self.duration_secs.map(Duration::from_secs)
    }
}

fn parse_speed(value: &str) -> Result<f64, String> {
    let speed: f64 = value
        .parse()
        .map_err(|_| format!("'{value}' is not a number"))?;
    if speed.is_finite() && speed > 0.0 && speed <= 10_000.0 {
        Ok(speed)
    } else {
        Err("must be greater than 0 and at most 10000".to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_plugin() {
        let config = Config::try_parse_from(["demo-fleet", "--plugin-key", "k"]).expect("parses");
        assert_eq!(config.servers, 3);
        assert_eq!(config.players, 40);
        assert_eq!(config.sync_interval(), Duration::from_secs(15));
        assert_eq!(config.speed, 1.0);
        assert!(config.duration().is_none());
        assert_eq!(config.history_days, 0);
        assert!(config.history_marker.is_none());
    }

    #[test]
    fn history_days_are_bounded() {
        let parse = |days: &str| {
            Config::try_parse_from(["demo-fleet", "--plugin-key", "k", "--history-days", days])
        };
        assert_eq!(parse("30").expect("parses").history_days, 30);
        assert!(parse("91").is_err());
        assert!(parse("-1").is_err());
    }

    #[test]
    fn speed_must_be_positive() {
        for bad in ["0", "-1", "nan", "fast"] {
            let parsed =
                Config::try_parse_from(["demo-fleet", "--plugin-key", "k", "--speed", bad]);
            assert!(parsed.is_err(), "{bad}");
        }
    }
}
