//! Running every read model over a sequence of chunks, each model at its own pace: a model
//! takes its next chunk as soon as it has finished the one before, and a model that
//! [depends on](ReadModel::depends_on) others takes a chunk only once they have finished that
//! same chunk. Each job holds one of a set of slots while it runs (taken after waiting for its
//! dependencies, so waiting never holds one). The pipelined replay's order ([`super::pipeline`]).
//!
//! A model behind the others finds chunks waiting for it: once it holds a slot, its job takes
//! the next chunks too (up to a bound) when they are already dealt and its dependencies have
//! finished them, so taking them waits for nothing. Its work that does not grow with a chunk
//! (a fold reads and writes each player's row once per job, however many times the chunks
//! name the player) is then done once for all of them, and the slowest model catches up.

use crate::projections::ReadModel;
use anyhow::Context;
use std::future::Future;
use std::sync::Arc;
use tokio::sync::{Semaphore, mpsc, watch};

/// Runs `job(model, chunks)` for every model of `models` over every chunk `chunks` yields, in
/// the chunks' order for each model, each job on one chunk or on up to `merge` consecutive
/// ones (see the module docs); a job returns one output per chunk, and `done(model, chunk,
/// output)` gets each, in order, as the job finishes (`model` is its index in `models`).
/// Returns once `chunks` is closed and every model has finished every chunk, or at the first
/// failed job (the other jobs are then dropped). A dependency outside `models` is not waited
/// for.
pub(super) async fn run<T, O, Job, Fut, Done>(
    models: &[&'static dyn ReadModel],
    slots: &Semaphore,
    merge: usize,
    mut chunks: mpsc::UnboundedReceiver<Arc<T>>,
    job: Job,
    done: Done,
) -> anyhow::Result<()>
where
    Job: Fn(&'static dyn ReadModel, Vec<Arc<T>>) -> Fut,
    Fut: Future<Output = anyhow::Result<Vec<O>>>,
    Done: Fn(usize, &T, O),
{
    let (senders, receivers): (Vec<_>, Vec<_>) = models
        .iter()
        .map(|_| mpsc::unbounded_channel::<(usize, Arc<T>)>())
        .unzip();
    // How many chunks each model has finished.
    let (finished, watchers): (Vec<_>, Vec<_>) =
        models.iter().map(|_| watch::channel(0usize)).unzip();
    let deal = async move {
        let mut index = 0;
        while let Some(chunk) = chunks.recv().await {
            for sender in &senders {
                // A model whose receiver is gone has failed, and its failure ends the run.
                let _ = sender.send((index, Arc::clone(&chunk)));
            }
            index += 1;
        }
        anyhow::Ok(())
    };
    let (job, done) = (&job, &done);
    let runs = models.iter().zip(receivers).zip(&finished).enumerate().map(
        |(position, ((&model, mut receiver), finished))| {
            let mut dependencies: Vec<watch::Receiver<usize>> = model
                .depends_on()
                .iter()
                .filter_map(|name| models.iter().position(|m| m.name() == *name))
                .map(|index| watchers[index].clone())
                .collect();
            async move {
                while let Some((index, chunk)) = receiver.recv().await {
                    for dependency in &mut dependencies {
                        dependency
                            .wait_for(|count| *count > index)
                            .await
                            .context("a read model this one depends on stopped")?;
                    }
                    let slot = slots
                        .acquire()
                        .await
                        .context("the transaction slots were closed")?;
                    let (mut batch, mut last) = (vec![chunk], index);
                    while batch.len() < merge
                        && dependencies.iter().all(|d| *d.borrow() > last + 1)
                        && let Ok((next, chunk)) = receiver.try_recv()
                    {
                        batch.push(chunk);
                        last = next;
                    }
                    let outputs = job(model, batch.clone()).await?;
                    drop(slot);
                    anyhow::ensure!(
                        outputs.len() == batch.len(),
                        "a job over {} chunks gave {} outputs",
                        batch.len(),
                        outputs.len()
                    );
                    for (chunk, output) in batch.iter().zip(outputs) {
                        done(position, chunk, output);
                    }
                    finished.send_replace(last + 1);
                }
                anyhow::Ok(())
            }
        },
    );
    tokio::try_join!(deal, futures::future::try_join_all(runs))?;
    Ok(())
}

#[cfg(test)]
#[path = "stages_tests.rs"]
mod tests;
