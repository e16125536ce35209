//! Privacy settings and the buckets the keys live in.

use super::{DEFAULT_CACHED_PLAYERS, Keyring, MasterKey};
use crate::config::{ConfigError, Vars};
use crate::event_log::EventLogConfig;
use async_nats::jetstream::{self, kv, stream};

/// `PRIVACY_MASTER_KEY`, `PRIVACY_ENCRYPTION` and `PRIVACY_KEY_CACHE_PLAYERS`.
#[derive(Debug, Clone)]
pub struct PrivacyConfig {
    /// Wraps every data key (`PRIVACY_MASTER_KEY`, required, at least 32 characters). Every
    /// ingest, projector, notifier and query-api process of a deployment needs the same one.
    pub master_key: MasterKey,
    /// `PRIVACY_ENCRYPTION`: `on` (default) seals personal fields at ingest; `off` appends new
    /// writes in clear (what was sealed still opens). For benchmarks and migrations only.
    pub seal: bool,
    /// `PRIVACY_KEY_CACHE_PLAYERS` (default [`DEFAULT_CACHED_PLAYERS`], 1 to 10,000,000): the
    /// players whose keys each process keeps in memory at most (about 330 bytes each); past
    /// it, those not needed lately are dropped and fetched from the key bucket when next
    /// needed.
    pub cached_players: usize,
}

impl PrivacyConfig {
    /// Reads the settings from `vars`.
    pub fn from_vars(vars: &Vars) -> Result<PrivacyConfig, ConfigError> {
        let secret = vars.required_secret("PRIVACY_MASTER_KEY")?;
        let master_key = MasterKey::new(secret.expose()).map_err(|e| ConfigError::Invalid {
            name: "PRIVACY_MASTER_KEY",
            reason: e.to_string(),
        })?;
        let seal = match vars
            .or_default("PRIVACY_ENCRYPTION", "on".to_owned())?
            .as_str()
        {
            "on" => true,
            "off" => false,
            other => {
                return Err(ConfigError::Invalid {
                    name: "PRIVACY_ENCRYPTION",
                    reason: format!("{other:?} is neither on nor off"),
                });
            }
        };
        let cached_players =
            vars.or_default("PRIVACY_KEY_CACHE_PLAYERS", DEFAULT_CACHED_PLAYERS)?;
        if !(1..=10_000_000).contains(&cached_players) {
            return Err(ConfigError::Invalid {
                name: "PRIVACY_KEY_CACHE_PLAYERS",
                reason: format!("{cached_players} is not between 1 and 10000000"),
            });
        }
        Ok(PrivacyConfig {
            master_key,
            seal,
            cached_players,
        })
    }

    /// Opens (creating when missing) the privacy buckets and returns a keyring over them.
    pub async fn keyring(
        &self,
        js: &jetstream::Context,
        log: &EventLogConfig,
    ) -> anyhow::Result<Keyring> {
        let buckets = PrivacyBuckets::of(log);
        let players = crate::nats::open_bucket(js, buckets.players).await?;
        let accounts = crate::nats::open_bucket(js, buckets.accounts).await?;
        Ok(Keyring::new(
            players,
            accounts,
            self.master_key.clone(),
            self.seal,
            self.cached_players,
        ))
    }
}

/// The two key-value buckets of [`super::Keyring`], named after `PRIVACY_BUCKET`
/// (default `GS_PRIVACY`): `<name>_PLAYERS` and `<name>_ACCOUNTS`. File storage with the log's
/// replicas and one revision per key, so a purge leaves no older value behind.
#[derive(Debug, Clone)]
pub struct PrivacyBuckets {
    /// Players' data keys.
    pub players: kv::Config,
    /// Period keys and policies.
    pub accounts: kv::Config,
}

impl PrivacyBuckets {
    /// The buckets of the deployment whose log is `log`.
    pub fn of(log: &EventLogConfig) -> PrivacyBuckets {
        let bucket = |suffix: &str, description: &str| kv::Config {
            bucket: format!("{}_{suffix}", log.privacy_bucket),
            description: description.into(),
            history: 1,
            storage: stream::StorageType::File,
            num_replicas: log.replicas,
            ..Default::default()
        };
        PrivacyBuckets {
            players: bucket(
                "PLAYERS",
                "Warden privacy: p.<account>.<player> -> the player's data key (wrapped)",
            ),
            accounts: bucket(
                "ACCOUNTS",
                "Warden privacy: d.<account>.<class>.<day> -> period key (wrapped); \
                 policy.<account> -> privacy policy",
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(vars: Vars) -> Result<PrivacyConfig, ConfigError> {
        PrivacyConfig::from_vars(&vars.set("PRIVACY_MASTER_KEY", "k".repeat(32)))
    }

    #[test]
    fn the_key_cache_bound_defaults_and_must_be_in_range() {
        let default = with(Vars::empty()).expect("valid");
        assert_eq!(default.cached_players, DEFAULT_CACHED_PLAYERS);
        let set = with(Vars::empty().set("PRIVACY_KEY_CACHE_PLAYERS", 5_000)).expect("valid");
        assert_eq!(set.cached_players, 5_000);
        for bad in ["0", "10000001", "many", "-1"] {
            let refused = with(Vars::empty().set("PRIVACY_KEY_CACHE_PLAYERS", bad));
            assert!(
                matches!(
                    refused,
                    Err(ConfigError::Invalid {
                        name: "PRIVACY_KEY_CACHE_PLAYERS",
                        ..
                    })
                ),
                "{bad}: {refused:?}"
            );
        }
    }
}
