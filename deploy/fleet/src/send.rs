//! Sending a simulated batch through the Warden SDK.
//!
//! The simulation builds records as JSON (with their client ids); here each batch becomes the
//! SDK's typed records of its kind, and [`PluginClient::send_batch`] writes it, retrying with
//! backoff and `Retry-After` and resending the same ids, so nothing is stored twice.

use serde::de::DeserializeOwned;
use serde_json::Value;
use shared::records::RecordKind;
use warden_sdk::{
    AccountLink, AnticheatFlag, ChatEntry, CustomEvent, Heartbeat, PluginClient, PluginRecord,
    Punishment, RankChange, SdkError, Session, WriteReport,
};

/// Writes `records` (JSON records of `kind`) as one batch through the SDK.
pub async fn send_batch(
    client: &PluginClient,
    kind: RecordKind,
    records: Vec<Value>,
) -> Result<WriteReport, SdkError> {
    match kind {
        RecordKind::Heartbeat => typed::<Heartbeat>(client, records).await,
        RecordKind::Chat => typed::<ChatEntry>(client, records).await,
        RecordKind::Punishment => typed::<Punishment>(client, records).await,
        RecordKind::AnticheatFlag => typed::<AnticheatFlag>(client, records).await,
        RecordKind::Session => typed::<Session>(client, records).await,
        RecordKind::RankChange => typed::<RankChange>(client, records).await,
        RecordKind::AccountLink => typed::<AccountLink>(client, records).await,
        RecordKind::Custom => typed::<CustomEvent>(client, records).await,
        // The simulation makes no notes or erasures: only query-api writes them.
        RecordKind::Note => Err(SdkError::Config(
            "staff notes have no plugin endpoint".into(),
        )),
        RecordKind::Erasure => Err(SdkError::Config(
            "player erasures have no plugin endpoint".into(),
        )),
        // Dashboard actions are written by query-api; only a plugin that enforces one answers.
        RecordKind::Action | RecordKind::ActionAck => Err(SdkError::Config(
            "the simulation neither acts on the dashboard nor enforces actions".into(),
        )),
        RecordKind::Appeal => Err(SdkError::Config(
            "appeals come from the public appeal form, not a plugin".into(),
        )),
    }
}

async fn typed<R: PluginRecord + DeserializeOwned>(
    client: &PluginClient,
    records: Vec<Value>,
) -> Result<WriteReport, SdkError> {
    let records = to_typed::<R>(records).map_err(SdkError::Decode)?;
    client.send_batch(records).await
}

/// The JSON records as the SDK's type `R`.
pub fn to_typed<R: DeserializeOwned>(records: Vec<Value>) -> Result<Vec<R>, serde_json::Error> {
    records.into_iter().map(serde_json::from_value).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::activity::{Batch, Simulation};
    use crate::world::{DEFAULT_WORLD_SEED, World};
    use chrono::Utc;

    /// Every record the simulation makes is a valid SDK record of its kind, id included.
    #[test]
    fn every_simulated_record_converts_to_the_sdk_type_with_its_id() {
        let world = World::generate(DEFAULT_WORLD_SEED, 3, 40);
        let mut sim = Simulation::new(world, Some(7), 50.0, 2);
        let mut batches = sim.start(Utc::now());
        for _ in 0..30 {
            batches.extend(sim.tick(1.0, Utc::now()));
        }
        batches.extend(sim.shutdown(Utc::now()));
        let mut kinds = std::collections::HashSet::new();
        for Batch { kind, records } in batches {
            kinds.insert(kind);
            let ids: Vec<Option<uuid::Uuid>> = match kind {
                RecordKind::Heartbeat => ids::<Heartbeat>(records),
                RecordKind::Chat => ids::<ChatEntry>(records),
                RecordKind::Punishment => ids::<Punishment>(records),
                RecordKind::AnticheatFlag => ids::<AnticheatFlag>(records),
                RecordKind::Session => ids::<Session>(records),
                RecordKind::RankChange => ids::<RankChange>(records),
                RecordKind::AccountLink => ids::<AccountLink>(records),
                RecordKind::Custom => ids::<CustomEvent>(records),
                RecordKind::Note => panic!("the simulation made a note"),
                RecordKind::Erasure => panic!("the simulation made an erasure"),
                RecordKind::Action | RecordKind::ActionAck => {
                    panic!("the simulation made a dashboard action")
                }
                RecordKind::Appeal => panic!("the simulation made an appeal"),
            };
            assert!(ids.iter().all(Option::is_some), "{kind:?} without ids");
        }
        assert!(kinds.len() >= 5, "the simulation made only {kinds:?}");
    }

    fn ids<R: PluginRecord>(records: Vec<Value>) -> Vec<Option<uuid::Uuid>> {
        to_typed::<R>(records)
            .expect("the SDK type reads the record")
            .iter()
            .map(PluginRecord::id)
            .collect()
    }
}
