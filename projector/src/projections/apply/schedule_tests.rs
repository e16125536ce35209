//! The scheduler's order and bound, with fake models (no database).

use super::*;
use crate::projections::fake_model::Fake;
use std::sync::Mutex;
use std::time::Duration;

static SLOW: Fake = Fake("slow", &[]);
static FAST: Fake = Fake("fast", &[]);
static OTHER: Fake = Fake("other", &[]);
static SCRUB: Fake = Fake("scrub", &["slow", "fast", "absent"]);
static MODELS: [&dyn ReadModel; 4] = [&SLOW, &FAST, &OTHER, &SCRUB];

/// What happened, in order: `start name` / `end name`.
fn log_of(log: &Mutex<Vec<String>>) -> Vec<String> {
    log.lock().map(|l| l.clone()).unwrap_or_default()
}

#[tokio::test]
async fn a_model_starts_only_after_its_dependencies_finished() {
    for concurrency in [1, 2, 4] {
        let log = Mutex::new(Vec::new());
        let running = Mutex::new(0usize);
        let most = Mutex::new(0usize);
        let results = in_dependency_order(&MODELS, &Semaphore::new(concurrency), |model| {
            let (log, running, most) = (&log, &running, &most);
            async move {
                log.lock()
                    .expect("log")
                    .push(format!("start {}", model.name()));
                {
                    let mut now = running.lock().expect("running");
                    *now += 1;
                    let mut most = most.lock().expect("most");
                    *most = (*most).max(*now);
                }
                // The dependency that finishes last is the slow one.
                let pause = if model.name() == "slow" { 50 } else { 1 };
                tokio::time::sleep(Duration::from_millis(pause)).await;
                *running.lock().expect("running") -= 1;
                log.lock()
                    .expect("log")
                    .push(format!("end {}", model.name()));
                Ok(model.name())
            }
        })
        .await;
        let names: Vec<_> = results
            .into_iter()
            .map(|r| r.and_then(Result::ok))
            .collect();
        assert_eq!(
            names,
            [Some("slow"), Some("fast"), Some("other"), Some("scrub")]
        );
        let log = log_of(&log);
        let position = |entry: &str| log.iter().position(|e| e == entry);
        let scrub_started = position("start scrub").expect("scrub ran");
        for dependency in ["slow", "fast"] {
            let ended = position(&format!("end {dependency}")).expect("ran");
            assert!(ended < scrub_started, "concurrency {concurrency}: {log:?}");
        }
        let most = *most.lock().expect("most");
        assert!(
            most <= concurrency,
            "{most} ran at once, limit {concurrency}"
        );
        if concurrency > 1 {
            assert!(most > 1, "never ran two models at once: {log:?}");
        }
    }
}

#[tokio::test]
async fn a_model_whose_dependency_failed_does_not_run() {
    let ran = Mutex::new(Vec::new());
    let results = in_dependency_order(&MODELS, &Semaphore::new(2), |model| {
        let ran = &ran;
        async move {
            ran.lock().expect("ran").push(model.name());
            if model.name() == "fast" {
                return Err(ProjectorError::event_log("an outage"));
            }
            Ok(())
        }
    })
    .await;
    assert!(matches!(results[0], Some(Ok(()))));
    assert!(matches!(results[1], Some(Err(_))));
    assert!(matches!(results[2], Some(Ok(()))));
    assert!(
        results[3].is_none(),
        "scrub ran after its dependency failed"
    );
    assert!(!ran.lock().expect("ran").contains(&"scrub"));
}
