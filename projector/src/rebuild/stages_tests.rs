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
        chunks,
        |model, chunk: Arc<usize>| {
            let (note, running) = (&note, &running);
            async move {
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
                Ok(*chunk)
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
        chunks,
        |model, chunk: Arc<usize>| {
            let started = &started;
            async move {
                started
                    .lock()
                    .expect("started")
                    .push(format!("{} {chunk}", model.name()));
                if model.name() == "slow" && *chunk == 1 {
                    anyhow::bail!("an outage");
                }
                tokio::time::sleep(Duration::from_millis(1)).await;
                Ok(())
            }
        },
        |_, _, ()| {},
    )
    .await;
    assert!(result.is_err(), "the failure was lost");
    let started = started.lock().expect("started").clone();
    assert!(!started.contains(&"scrub 1".to_owned()), "{started:?}");
}
