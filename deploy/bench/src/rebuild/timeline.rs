//! What the rebuild's progress channel showed, read back after it finished: when each phase
//! began, how long the load took, and how well the load's ETA predicted its end.

use projector::rebuild::{Phase, Progress};
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// The load's share of bytes from which its ETA is judged (the first 10% is warm-up: too few
/// bytes to tell a rate), and up to which, in bytes and in time (the last 10% leaves too
/// little time for a relative error to mean much). Both in time and in bytes: the bytes land a
/// chunk at a time, and on the benchmark's log of about four chunks no share between 85% and
/// 100% is ever seen, so the bytes alone judged samples up to the last tick (200 ms) before
/// the load's end, where any error is a large share of the time left.
const ETA_FROM: f64 = 0.1;
const ETA_TO: f64 = 0.9;

/// One value seen on the channel, and when.
#[derive(Debug, Clone)]
pub(super) struct Sample {
    pub(super) at: Instant,
    pub(super) progress: Progress,
}

/// Every value the channel showed (the watch keeps only the newest, so a value replaced
/// before this task woke is missed; the rebuild sends at least every 200 ms).
pub(super) fn record(
    mut progress: watch::Receiver<Progress>,
    stop: CancellationToken,
) -> tokio::task::JoinHandle<Vec<Sample>> {
    tokio::spawn(async move {
        let mut samples = vec![Sample {
            at: Instant::now(),
            progress: progress.borrow_and_update().clone(),
        }];
        loop {
            tokio::select! {
                biased;
                () = stop.cancelled() => break,
                changed = progress.changed() => if changed.is_err() { break },
            }
            samples.push(Sample {
                at: Instant::now(),
                progress: progress.borrow_and_update().clone(),
            });
        }
        samples
    })
}

/// The phases as the channel showed them.
#[derive(Debug, Default)]
pub(super) struct Timeline {
    /// Each phase seen and how long it lasted (until the next one seen, the last one until
    /// `end`).
    pub(super) phases: Vec<(Phase, Duration)>,
    /// The load phase's start and end, when both were seen.
    pub(super) load: Option<(Instant, Instant)>,
    /// The worst relative error of the load's ETA between 10% and 90% of its bytes, before
    /// the last tenth of its time, and its sample (as in [`Timeline::eta_trace`]); `None`
    /// without such a sample with an ETA.
    pub(super) eta_worst: Option<Judged>,
    /// The same, judged up to the load's end in time (as before 2026-11-25), for comparison.
    pub(super) eta_worst_error_to_the_end: Option<f64>,
    /// How many samples that error was judged on.
    pub(super) eta_samples: usize,
    /// Samples seen in all.
    pub(super) samples: usize,
    /// The load's ETA at each tenth of its bytes: `(share of bytes, seconds into the load,
    /// predicted seconds left, actual seconds left)`, to show how the rate moved.
    pub(super) eta_trace: Vec<(f64, f64, f64, f64)>,
}

impl Timeline {
    /// Reads `samples` (in time order) of a rebuild that returned at `end`.
    pub(super) fn of(samples: &[Sample], end: Instant) -> Timeline {
        let mut changes: Vec<(Phase, Instant)> = Vec::new();
        for sample in samples {
            if changes
                .last()
                .is_none_or(|(p, _)| *p != sample.progress.phase)
            {
                changes.push((sample.progress.phase, sample.at));
            }
        }
        let phases = changes
            .iter()
            .enumerate()
            .map(|(i, (phase, at))| {
                let next = changes.get(i + 1).map_or(end, |(_, next)| *next);
                (*phase, next.saturating_duration_since(*at))
            })
            .collect();
        // A phase the watch skipped still ends the load: anything past it does.
        let started = changes.iter().find(|(p, _)| *p >= Phase::Load).map(|c| c.1);
        let ended = changes.iter().find(|(p, _)| *p > Phase::Load).map(|c| c.1);
        let load = started.zip(ended).filter(|(s, e)| e > s);
        let judged = |time_to: f64| -> Vec<Judged> {
            load.map(|(start, end)| eta_errors(samples, start, end, time_to))
                .unwrap_or_default()
        };
        let errors = judged(ETA_TO);
        let to_the_end = judged(1.0);
        Timeline {
            phases,
            eta_trace: load.map_or_else(Vec::new, |(start, end)| eta_trace(samples, start, end)),
            load,
            eta_worst: errors
                .iter()
                .copied()
                .reduce(|a, b| if b.0 > a.0 { b } else { a }),
            eta_worst_error_to_the_end: to_the_end.iter().map(|j| j.0).reduce(f64::max),
            eta_samples: errors.len(),
            samples: samples.len(),
        }
    }

    /// The load phase's duration, when seen.
    pub(super) fn load_time(&self) -> Option<Duration> {
        self.load.map(|(start, end)| end - start)
    }

    /// `prepare 0.10 s, load 8.20 s, ...`.
    pub(super) fn describe(&self) -> String {
        let phases: Vec<String> = self
            .phases
            .iter()
            .map(|(phase, took)| format!("{phase} {:.2} s", took.as_secs_f64()))
            .collect();
        phases.join(", ")
    }

    /// `10%: 3.1 s in, 30.2 s left predicted, 27.9 s actual; 20%: ...`.
    pub(super) fn describe_eta(&self) -> String {
        let steps: Vec<String> = self
            .eta_trace
            .iter()
            .map(|(share, into, predicted, actual)| {
                format!(
                    "{:.0}%: {into:.1} s in, {predicted:.1} s left predicted, {actual:.1} s actual",
                    share * 100.0
                )
            })
            .collect();
        steps.join("; ")
    }
}

/// The first load sample with an ETA at or past each tenth of the load's bytes (see
/// [`Timeline::eta_trace`]).
fn eta_trace(samples: &[Sample], start: Instant, end: Instant) -> Vec<(f64, f64, f64, f64)> {
    let mut trace = Vec::new();
    let mut next = 0.1;
    for sample in samples.iter().filter(|s| s.progress.phase == Phase::Load) {
        let p = &sample.progress;
        let (Some(eta), true) = (p.eta, p.bytes_total > 0) else {
            continue;
        };
        let share = p.bytes as f64 / p.bytes_total as f64;
        if share < next || sample.at >= end {
            continue;
        }
        trace.push((
            share,
            (sample.at - start).as_secs_f64(),
            eta.as_secs_f64(),
            (end - sample.at).as_secs_f64(),
        ));
        while next <= share {
            next += 0.1;
        }
    }
    trace
}

/// A judged sample of the load's ETA: its error, and `(share of bytes, seconds into the load,
/// predicted seconds left, actual seconds left)`.
type Judged = (f64, (f64, f64, f64, f64));

/// For each load sample between [`ETA_FROM`] and [`ETA_TO`] of the load's bytes, and before
/// `time_to` of its time, that has an ETA: |predicted end - actual end| / (actual end -
/// sample time).
fn eta_errors(
    samples: &[Sample],
    load_start: Instant,
    load_end: Instant,
    time_to: f64,
) -> Vec<Judged> {
    let last = load_start + (load_end - load_start).mul_f64(time_to);
    samples
        .iter()
        .filter(|s| s.progress.phase == Phase::Load && s.at < load_end && s.at <= last)
        .filter(|s| {
            let p = &s.progress;
            let done = p.bytes as f64 / p.bytes_total.max(1) as f64;
            p.bytes_total > 0 && (ETA_FROM..=ETA_TO).contains(&done)
        })
        .filter_map(|s| {
            let eta = s.progress.eta?;
            let predicted = s.at + eta;
            let left = (load_end - s.at).as_secs_f64();
            let off = if predicted >= load_end {
                predicted - load_end
            } else {
                load_end - predicted
            };
            let p = &s.progress;
            let seen = (
                p.bytes as f64 / p.bytes_total as f64,
                (s.at - load_start).as_secs_f64(),
                eta.as_secs_f64(),
                left,
            );
            Some((off.as_secs_f64() / left.max(1e-6), seen))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(start: Instant, ms: u64, phase: Phase, bytes: u64, eta_ms: Option<u64>) -> Sample {
        Sample {
            at: start + Duration::from_millis(ms),
            progress: Progress {
                phase,
                bytes,
                bytes_total: 1_000,
                eta: eta_ms.map(Duration::from_millis),
                ..Progress::default()
            },
        }
    }

    #[test]
    fn phases_last_until_the_next_and_the_eta_is_judged_between_10_and_90_percent() {
        let t0 = Instant::now();
        let samples = [
            at(t0, 0, Phase::Prepare, 0, None),
            at(t0, 100, Phase::Load, 0, None),
            // 5%: too early to count, however wrong.
            at(t0, 150, Phase::Load, 50, Some(10_000)),
            // 20% at 300 ms, the load ends at 1,100 ms: predicts 1,300 (error 200/800).
            at(t0, 300, Phase::Load, 200, Some(1_000)),
            // 50% at 600 ms: predicts 1,100 exactly.
            at(t0, 600, Phase::Load, 500, Some(500)),
            // 60% without an ETA: not judged.
            at(t0, 700, Phase::Load, 600, None),
            // 85% of the bytes, but in the last tenth of the time: 50 ms off with 50 ms
            // left, judged only up to the end.
            at(t0, 1_050, Phase::Load, 850, Some(100)),
            // 95%: too late to count.
            at(t0, 1_080, Phase::Load, 950, Some(5_000)),
            // The index build was skipped by the watch: catch-up ends the load.
            at(t0, 1_100, Phase::CatchUp, 1_000, None),
            at(t0, 1_400, Phase::Done, 1_000, None),
        ];
        let timeline = Timeline::of(&samples, t0 + Duration::from_millis(1_500));
        let phases: Vec<(Phase, u128)> = timeline
            .phases
            .iter()
            .map(|(p, d)| (*p, d.as_millis()))
            .collect();
        assert_eq!(
            phases,
            [
                (Phase::Prepare, 100),
                (Phase::Load, 1_000),
                (Phase::CatchUp, 300),
                (Phase::Done, 100)
            ]
        );
        assert_eq!(timeline.load_time(), Some(Duration::from_millis(1_000)));
        assert_eq!(timeline.eta_samples, 2);
        let (worst, (share, into, predicted, actual)) = timeline.eta_worst.expect("judged");
        assert!((worst - 0.25).abs() < 1e-9, "{worst}");
        assert_eq!((share, into, predicted, actual), (0.2, 0.2, 1.0, 0.8));
        let to_the_end = timeline.eta_worst_error_to_the_end.expect("judged");
        assert!((to_the_end - 1.0).abs() < 1e-9, "{to_the_end}");
        assert_eq!(
            timeline.describe(),
            "prepare 0.10 s, load 1.00 s, catch_up 0.30 s, done 0.10 s"
        );
    }

    #[test]
    fn without_a_load_or_an_eta_nothing_is_judged() {
        let t0 = Instant::now();
        // What the channel shows before the phases are reported: the default, throughout.
        let samples = [at(t0, 0, Phase::Prepare, 0, None)];
        let timeline = Timeline::of(&samples, t0 + Duration::from_secs(1));
        assert_eq!(timeline.load, None);
        assert_eq!(timeline.eta_worst, None);
        let samples = [
            at(t0, 0, Phase::Load, 500, None),
            at(t0, 10, Phase::IndexBuild, 1_000, None),
        ];
        let timeline = Timeline::of(&samples, t0 + Duration::from_secs(1));
        assert_eq!(timeline.load_time(), Some(Duration::from_millis(10)));
        assert_eq!((timeline.eta_worst, timeline.eta_samples), (None, 0));
    }
}
