//! The models' work ETA on simulated pipelined loads: models applying chunks in order, each
//! at most [`READ_AHEAD`] chunks ahead of the slowest, sharing the machine's cores evenly;
//! judged as the benchmark judges the load's ETA.

use super::*;
use crate::rebuild::pipeline::READ_AHEAD;

/// Simulated time step, in seconds.
const STEP: f64 = 0.001;
/// Bytes of each chunk.
const CHUNK: u64 = 1_000;

/// One model's commit: (model, seconds, busy seconds, chunk).
type Commit = (usize, f64, f64, usize);

/// Simulates `chunks` chunks applied by models whose chunk takes `solo[m]` seconds alone,
/// on `cores` cores shared evenly by the transactions running. Returns the commits and the
/// end.
fn simulate(solo: &[f64], chunks: usize, cores: f64) -> (Vec<Commit>, f64) {
    let models = solo.len();
    let mut next = vec![0usize; models];
    let mut progress = vec![0.0; models];
    let mut began = vec![None; models];
    let mut landed = vec![0usize; chunks];
    let mut commits = Vec::new();
    let mut now = 0.5;
    while next.iter().any(|&n| n < chunks) {
        let running: Vec<usize> = (0..models)
            .filter(|&m| {
                next[m] < chunks && (next[m] < READ_AHEAD || landed[next[m] - READ_AHEAD] == models)
            })
            .collect();
        let speed = (cores / running.len() as f64).min(1.0);
        for &m in &running {
            let started = *began[m].get_or_insert(now);
            progress[m] += speed * STEP;
            if progress[m] >= solo[m] {
                commits.push((m, now, now - started, next[m]));
                landed[next[m]] += 1;
                next[m] += 1;
                progress[m] = 0.0;
                began[m] = None;
            }
        }
        now += STEP;
    }
    (commits, now)
}

fn secs(seconds: f64) -> Duration {
    Duration::from_secs_f64(seconds)
}

/// The worst relative error of the ETA over the commits between 10% and 90% of the chunks
/// landed (every model has committed them).
fn worst_error(solo: &[f64], chunks: usize, cores: f64) -> f64 {
    let (commits, end) = simulate(solo, chunks, cores);
    let models = solo.len();
    let total = CHUNK * chunks as u64;
    let mut work = ModelWork::default();
    let mut per_chunk = vec![0usize; chunks];
    let mut landed = 0;
    let mut worst = 0.0f64;
    for &(model, at, busy, chunk) in &commits {
        work.committed((model, models), secs(at), CHUNK, secs(busy), total);
        per_chunk[chunk] += 1;
        if per_chunk[chunk] == models {
            landed += 1;
        }
        let share = landed as f64 / chunks as f64;
        if !(0.1..=0.9).contains(&share) {
            continue;
        }
        let actual = end - at;
        if let Some(eta) = work.eta(secs(at)) {
            worst = worst.max((eta.as_secs_f64() - actual).abs() / actual);
        }
    }
    worst
}

/// The benchmark's shape: chat and events fast, players slow, a few small models.
const BENCH: [f64; 5] = [1.2, 1.4, 3.0, 0.3, 0.2];

#[test]
fn nothing_is_told_until_every_model_has_committed() {
    let mut work = ModelWork::default();
    work.committed((0, 2), secs(2.0), CHUNK, secs(1.5), 4 * CHUNK);
    assert_eq!(work.eta(secs(2.0)), None);
    work.committed((1, 2), secs(3.0), CHUNK, secs(2.5), 4 * CHUNK);
    assert!(work.eta(secs(3.0)).is_some());
}

#[test]
fn models_at_a_steady_pace_are_predicted_exactly() {
    // Two models side by side, on a core each, 1 s a chunk: four chunks end at 4 s.
    let mut work = ModelWork::default();
    work.committed((0, 2), secs(1.0), CHUNK, secs(1.0), 4 * CHUNK);
    work.committed((1, 2), secs(1.0), CHUNK, secs(1.0), 4 * CHUNK);
    let eta = work.eta(secs(1.0)).expect("told");
    assert!((eta.as_secs_f64() - 3.0).abs() < 1e-9, "{eta:?}");
    assert_eq!(work.eta(secs(2.5)), Some(secs(1.5)), "counted down");
}

#[test]
fn a_few_chunks_whose_fast_models_finish_early_stay_within_60_percent() {
    // The benchmark's shape: about four chunks, the fast models done with all of them while
    // the slowest is at its second. (An ETA from the bytes landed did about as well on this
    // simulation, 38% against 53%, which shares the cores evenly; on the benchmark itself it
    // did far worse: see the README's rebuild results.)
    let work = worst_error(&BENCH, 4, 2.0);
    assert!(work < 0.6, "worst {:.0}%", work * 100.0);
}

#[test]
fn a_long_pipelined_load_is_predicted_within_a_fifth_until_its_last_tenth() {
    let work = worst_error(&BENCH, 40, 1.5);
    assert!(work < 0.2, "worst {:.0}%", work * 100.0);
}
