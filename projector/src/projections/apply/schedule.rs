//! Running one job per read model concurrently, each holding one of a set of slots while it
//! runs, each model after the models it [depends on](ReadModel::depends_on) have finished
//! theirs. The live projector shares one set of slots between every partition it consumes, so
//! `PROJECTOR_APPLY_CONCURRENCY` bounds the transactions of the whole process.

use crate::error::ProjectorError;
use crate::projections::ReadModel;
use std::future::Future;
use tokio::sync::{Semaphore, watch};

/// Runs `job(model)` for every model of `models` and returns the results in the same order:
/// `None` for a model that did not run because a model it depends on failed. A dependency
/// outside `models` is not waited for (a rebuild or a retry of some models only).
///
/// A model waits for its dependencies before it takes a slot, so waiting never holds one and
/// any number of slots (at least 1) finishes.
pub(super) async fn in_dependency_order<T, F, Fut>(
    models: &[&'static dyn ReadModel],
    slots: &Semaphore,
    job: F,
) -> Vec<Option<Result<T, ProjectorError>>>
where
    F: Fn(&'static dyn ReadModel) -> Fut,
    Fut: Future<Output = Result<T, ProjectorError>>,
{
    // Each model's outcome once it has one: Some(committed).
    let (finished, watchers): (Vec<_>, Vec<_>) =
        models.iter().map(|_| watch::channel(None::<bool>)).unzip();
    let runs = models.iter().zip(&finished).map(|(&model, finished)| {
        let dependencies: Vec<watch::Receiver<Option<bool>>> = model
            .depends_on()
            .iter()
            .filter_map(|name| models.iter().position(|m| m.name() == *name))
            .map(|index| watchers[index].clone())
            .collect();
        // Futures are lazy: nothing of the job runs before it is awaited below.
        let run = job(model);
        async move {
            for mut dependency in dependencies {
                let committed = dependency
                    .wait_for(Option::is_some)
                    .await
                    .is_ok_and(|state| *state == Some(true));
                if !committed {
                    tracing::debug!(
                        projection = model.name(),
                        "not applied: a read model it depends on failed"
                    );
                    finished.send_replace(Some(false));
                    return None;
                }
            }
            // Never closed, so a slot always comes.
            let _slot = slots.acquire().await.ok();
            let result = run.await;
            finished.send_replace(Some(result.is_ok()));
            Some(result)
        }
    });
    futures::future::join_all(runs).await
}

#[cfg(test)]
#[path = "schedule_tests.rs"]
mod tests;
