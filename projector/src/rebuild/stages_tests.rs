//! The pipelined order, with fake models (no database): each model at its own pace, a
//! dependent model after its dependencies on the same chunk, and the slots' bound.

use super::*;
use crate::projections::fake_model::Fake;
use std::sync::Mutex;
use std::time::Duration;

static SLOW: Fake = Fake("slow", &[]);
static FAST: Fake = Fake("fast", &[]);
static SCRUB: Fake = Fake("scrub", &["slow", "fast", "absent"]);
static MODELS: [&dyn ReadModel; 3] = [&SLOW, &FAST, &SCRUB];

const CHUNKS: usize = 4;

/// Runs the fake models over `CHUNKS` chunks on `concurrency` slots; returns the log of
/// `start model chunk` / `end model chunk`, what `done` saw, and the most jobs at once.
async fn run_fakes(
    concurrency: usize,
) -> anyhow::Result<(Vec<String>, Vec<(usize, usize)>, usize)> {
    let log = Mutex::new(Vec::new());
    let seen = Mutex::new(Vec::new());
    let running = Mutex::new((0usize, 0usize));
    let (sender, chunks) = mpsc::unbounded_channel();
    for chunk in 0..CHUNKS {
        sender.send(Arc::new(chunk))?;
    }
    drop(sender);
    let note = |entry: String| log.lock().expect("log").push(entry);
    run(
        &MODELS,
        &Semaphore::new(concurrency),
        1,
        chunks,
        |model, batch: Vec<Arc<usize>>| {
            let (note, running) = (&note, &running);
            async move {
                let [chunk] = batch.as_slice() else {
                    anyhow::bail!("one chunk a job without merging: {batch:?}");
                };
                note(format!("start {} {chunk}", model.name()));
                {
                    let mut now = running.lock().expect("running");
                    now.0 += 1;
                    now.1 = now.1.max(now.0);
                }
                let pause = if model.name() == "slow" { 30 } else { 1 };
                tokio::time::sleep(Duration::from_millis(pause)).await;
                running.lock().expect("running").0 -= 1;
                note(format!("end {} {chunk}", model.name()));
                Ok(vec![**chunk])
            }
        },
        |model, chunk, output| {
            assert_eq!(*chunk, output);
            seen.lock().expect("seen").push((model, output));
        },
    )
    .await?;
    let log = log.lock().expect("log").clone();
    let seen = seen.lock().expect("seen").clone();
    let most = running.lock().expect("running").1;
    Ok((log, seen, most))
}

#[tokio::test]
async fn a_dependent_model_takes_a_chunk_only_after_its_dependencies_committed_it()
-> anyhow::Result<()> {
    for concurrency in [1, 2, 3] {
        let (log, seen, most) = run_fakes(concurrency).await?;
        let at = |entry: String| {
            log.iter()
                .position(|e| *e == entry)
                .unwrap_or_else(|| panic!("{entry} never happened: {log:?}"))
        };
        for chunk in 0..CHUNKS {
            for dependency in ["slow", "fast"] {
                assert!(
                    at(format!("end {dependency} {chunk}")) < at(format!("start scrub {chunk}")),
                    "concurrency {concurrency}: {log:?}"
                );
            }
            // Each model in the chunks' order.
            if chunk > 0 {
                for model in ["slow", "fast", "scrub"] {
                    assert!(
                        at(format!("end {model} {}", chunk - 1))
                            < at(format!("start {model} {chunk}")),
                        "{log:?}"
                    );
                }
            }
        }
        // Every model's output of every chunk, each once.
        let mut seen = seen;
        seen.sort_unstable();
        let every: Vec<(usize, usize)> = (0..3)
            .flat_map(|model| (0..CHUNKS).map(move |chunk| (model, chunk)))
            .collect();
        assert_eq!(seen, every);
        assert!(most <= concurrency, "{most} at once, limit {concurrency}");
        if concurrency > 1 {
            // Pipelined: the fast model finished the last chunk before the slow one
            // finished the first, rather than waiting for it chunk by chunk.
            assert!(
                at(format!("end fast {}", CHUNKS - 1)) < at("end slow 0".to_owned()),
                "the fast model waited for the slow one: {log:?}"
            );
        }
    }
    Ok(())
}

#[tokio::test]
async fn a_failed_job_ends_the_run_and_its_dependents_never_take_that_chunk() {
    let started = Mutex::new(Vec::new());
    let (sender, chunks) = mpsc::unbounded_channel();
    for chunk in 0..CHUNKS {
        sender.send(Arc::new(chunk)).expect("send");
    }
    drop(sender);
    let result = run(
        &MODELS,
        &Semaphore::new(2),
        1,
        chunks,
        |model, batch: Vec<Arc<usize>>| {
            let started = &started;
            async move {
                let chunk = &batch[0];
                started
                    .lock()
                    .expect("started")
                    .push(format!("{} {chunk}", model.name()));
                if model.name() == "slow" && **chunk == 1 {
                    anyhow::bail!("an outage");
                }
                tokio::time::sleep(Duration::from_millis(1)).await;
                Ok(vec![()])
            }
        },
        |_, _, ()| {},
    )
    .await;
    assert!(result.is_err(), "the failure was lost");
    let started = started.lock().expect("started").clone();
    assert!(!started.contains(&"scrub 1".to_owned()), "{started:?}");
}

/// Runs the fake models with merging over chunks dealt one at a time, chunks 1-5 while `slow`
/// holds chunk 0 (so they wait for it); returns the log of `start model chunks` / `end model
/// chunks` (a job's chunks joined by `,`) and what `done` saw.
async fn run_merging(merge: usize) -> anyhow::Result<(Vec<String>, Vec<(usize, usize)>)> {
    let log = Mutex::new(Vec::new());
    let seen = Mutex::new(Vec::new());
    let slots = Semaphore::new(3);
    let (sender, chunks) = mpsc::unbounded_channel();
    let (started, mut slow_started) = mpsc::unbounded_channel::<()>();
    let (release, released) = watch::channel(false);
    let deal = async move {
        for chunk in 0..6 {
            sender.send(Arc::new(chunk))?;
            if chunk == 0 {
                slow_started.recv().await.context("slow never started")?;
            }
        }
        release.send_replace(true);
        anyhow::Ok(())
    };
    let note = |entry: String| log.lock().expect("log").push(entry);
    let apply = run(
        &MODELS,
        &slots,
        merge,
        chunks,
        |model, batch: Vec<Arc<usize>>| {
            let (note, started) = (&note, &started);
            let mut released = released.clone();
            async move {
                let chunks: Vec<usize> = batch.iter().map(|c| **c).collect();
                let named: Vec<String> = chunks.iter().map(ToString::to_string).collect();
                note(format!("start {} {}", model.name(), named.join(",")));
                if model.name() == "slow" {
                    let _ = started.send(());
                    released.wait_for(|r| *r).await?;
                }
                tokio::time::sleep(Duration::from_millis(1)).await;
                note(format!("end {} {}", model.name(), named.join(",")));
                Ok(chunks)
            }
        },
        |model, chunk, output| {
            assert_eq!(*chunk, output);
            seen.lock().expect("seen").push((model, output));
        },
    );
    tokio::try_join!(deal, apply)?;
    let log = log.lock().expect("log").clone();
    let seen = seen.lock().expect("seen").clone();
    Ok((log, seen))
}

/// The chunks of each of `model`'s jobs, in order, from a [`run_merging`] log.
fn jobs_of(log: &[String], model: &str) -> Vec<Vec<usize>> {
    let prefix = format!("start {model} ");
    log.iter()
        .filter_map(|entry| entry.strip_prefix(&prefix))
        .map(|chunks| {
            chunks
                .split(',')
                .map(|c| c.parse().expect("a chunk"))
                .collect()
        })
        .collect()
}

#[tokio::test]
async fn a_model_behind_takes_the_chunks_waiting_for_it_in_one_job_and_its_dependents_follow()
-> anyhow::Result<()> {
    let (log, seen) = run_merging(3).await?;
    // `slow` held chunk 0 while 1-5 were dealt: then 1-3 (the bound) at once, then 4-5.
    assert_eq!(
        jobs_of(&log, "slow"),
        [vec![0], vec![1, 2, 3], vec![4, 5]],
        "{log:?}"
    );
    // Every model's jobs cover every chunk once, in order.
    for model in ["slow", "fast", "scrub"] {
        let chunks: Vec<usize> = jobs_of(&log, model).concat();
        assert_eq!(chunks, (0..6).collect::<Vec<_>>(), "{model}: {log:?}");
    }
    // The scrub starts a job only once both its dependencies ended jobs reaching its last
    // chunk.
    for (at, entry) in log.iter().enumerate() {
        let Some(chunks) = entry.strip_prefix("start scrub ") else {
            continue;
        };
        let last: usize = chunks.rsplit(',').next().unwrap_or("").parse()?;
        for dependency in ["slow", "fast"] {
            let reached = log[..at]
                .iter()
                .filter_map(|e| e.strip_prefix(&format!("end {dependency} ")))
                .any(|c| c.split(',').any(|c| c.parse() == Ok(last)));
            assert!(
                reached,
                "scrub took {chunks} before {dependency} ended {last}: {log:?}"
            );
        }
    }
    let mut seen = seen;
    seen.sort_unstable();
    let every: Vec<(usize, usize)> = (0..3)
        .flat_map(|model| (0..6).map(move |chunk| (model, chunk)))
        .collect();
    assert_eq!(seen, every, "each chunk's output once per model");
    Ok(())
}

#[tokio::test]
async fn without_merging_every_job_is_one_chunk() -> anyhow::Result<()> {
    let (log, _) = run_merging(1).await?;
    for model in ["slow", "fast", "scrub"] {
        let jobs = jobs_of(&log, model);
        assert_eq!(jobs, (0..6).map(|c| vec![c]).collect::<Vec<_>>(), "{log:?}");
    }
    Ok(())
}
