//! Running every read model over a sequence of chunks, each model at its own pace: a model
//! takes its next chunk as soon as it has finished the one before, and a model that
//! [depends on](ReadModel::depends_on) others takes a chunk only once they have finished that
//! same chunk. Each job holds one of a set of slots while it runs (taken after waiting for its
//! dependencies, so waiting never holds one). The pipelined replay's order ([`super::pipeline`]).

use crate::projections::ReadModel;
use anyhow::Context;
use std::future::Future;
use std::sync::Arc;
use tokio::sync::{Semaphore, mpsc, watch};

/// Runs `job(model, chunk)` for every model of `models` on every chunk `chunks` yields, in
/// the chunks' order for each model (see the module docs), and gives `done(model, chunk,
/// output)` each job's output as it finishes (`model` is its index in `models`). Returns once
/// `chunks` is closed and every model has finished every chunk, or at the first failed job
/// (the other jobs are then dropped). A dependency outside `models` is not waited for.
pub(super) async fn run<T, O, Job, Fut, Done>(
    models: &[&'static dyn ReadModel],
    slots: &Semaphore,
    mut chunks: mpsc::UnboundedReceiver<Arc<T>>,
    job: Job,
    done: Done,
) -> anyhow::Result<()>
where
    Job: Fn(&'static dyn ReadModel, Arc<T>) -> Fut,
    Fut: Future<Output = anyhow::Result<O>>,
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
                    let output = job(model, Arc::clone(&chunk)).await?;
                    drop(slot);
                    done(position, &*chunk, output);
                    finished.send_replace(index + 1);
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
