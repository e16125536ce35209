//! Which of the copy's tables are loaded while the load still runs: their read model has
//! applied, in every partition, as far as the load goes (the highest live checkpoint of the
//! partition, as [`super::watch`] waits for). Their index build may start then
//! ([`super::indexes`]), beside the models still loading.
//!
//! A table can still be written after that: when the live projector moves on meanwhile (the
//! load then goes further), and by the erasure scrub, which writes other models' tables and
//! loads behind all of them. Such writes wait for the table's index build statement in
//! progress and maintain its indexes after, as the catch-up's do: only slower, never wrong.

use super::replay::Replay;
use crate::checkpoint::Partition;
use crate::projections::ReadModel;
use sqlx::PgPool;

/// The tables of `models` whose model has loaded every partition of the copy in `schema`.
pub(super) async fn tables(
    pool: &PgPool,
    schema: &str,
    models: &[&'static dyn ReadModel],
    replay: &Replay<'_>,
) -> Result<Vec<&'static str>, sqlx::Error> {
    let names = crate::projections::names_of(models);
    let targets = super::swap::live_positions(pool, &names).await?;
    let copied: Vec<(String, i32, i64)> = sqlx::query_as(&format!(
        "SELECT projection, log_partition, last_sequence FROM {schema}.projection_checkpoints
         WHERE projection = ANY($1) AND log_partition >= 0"
    ))
    .bind(&names)
    .fetch_all(pool)
    .await?;
    let copied: Vec<(&str, Partition, u64)> = copied
        .iter()
        .filter_map(|(model, partition, at)| {
            Some((
                model.as_str(),
                Partition::try_from(*partition).ok()?,
                u64::try_from(*at).ok()?,
            ))
        })
        .collect();
    Ok(loaded(models, &copied, &targets, |p| replay.position(p))
        .into_iter()
        // Its checkpoints are there, not all its rows yet.
        .filter(|model| !replay.defers(model.name()))
        .flat_map(|model| model.tables())
        .copied()
        .collect())
}

/// The models of `models` that have loaded every partition: by their checkpoints in the copy
/// (`copied`: model, partition, sequence), or the partition's position (`position`: every
/// model's, and an idle partition's once covered up to the stream's end), at or past the
/// partition's target (`targets`; a partition without one has nothing to load).
fn loaded<'m>(
    models: &'m [&'static dyn ReadModel],
    copied: &[(&str, Partition, u64)],
    targets: &[(Partition, u64)],
    position: impl Fn(Partition) -> u64,
) -> Vec<&'m &'static dyn ReadModel> {
    models
        .iter()
        .filter(|model| {
            targets.iter().all(|&(partition, target)| {
                position(partition) >= target
                    || copied.iter().any(|&(name, p, at)| {
                        name == model.name() && p == partition && at >= target
                    })
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::projections::READ_MODELS;

    fn named(name: &str) -> &'static dyn ReadModel {
        *READ_MODELS
            .iter()
            .find(|m| m.name() == name)
            .expect("a read model")
    }

    fn names(models: Vec<&&'static dyn ReadModel>) -> Vec<&'static str> {
        models.into_iter().map(|m| m.name()).collect()
    }

    #[test]
    fn a_model_is_loaded_once_it_reached_every_partitions_target() {
        let models = [named("chat"), named("players")];
        let targets = [(0, 900), (1, 400)];
        // Partition 1 holds nothing yet for anyone (position 0).
        let position = |_: Partition| 0;
        let copied = [
            ("chat", 0, 900),
            ("chat", 1, 400),
            ("players", 0, 900),
            ("players", 1, 399),
        ];
        assert_eq!(
            names(loaded(&models, &copied, &targets, position)),
            ["chat"]
        );
    }

    #[test]
    fn a_partition_covered_up_to_its_target_is_loaded_for_every_model() {
        let models = [named("chat"), named("players")];
        let targets = [(0, 900), (3, 1_000)];
        // Partition 3 is idle: covered up to the stream's end, its checkpoints left at 0.
        let position = |p: Partition| if p == 3 { 1_200 } else { 500 };
        let copied = [
            ("chat", 0, 900),
            ("chat", 3, 0),
            ("players", 0, 500),
            ("players", 3, 0),
        ];
        assert_eq!(
            names(loaded(&models, &copied, &targets, position)),
            ["chat"]
        );
    }

    #[test]
    fn without_targets_every_model_is_loaded() {
        let models = [named("chat")];
        assert_eq!(names(loaded(&models, &[], &[], |_| 0)), ["chat"]);
    }
}
