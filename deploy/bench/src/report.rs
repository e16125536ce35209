//! The report: every measurement, peak memory, and each target with its ratio and verdict,
//! written as JSON and printed as a table.

use crate::stats::Measurement;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// Everything one run found.
#[derive(Debug, Default, Serialize)]
pub(crate) struct Report {
    /// `quick` or `full`.
    pub(crate) mode: String,
    /// Where it ran.
    pub(crate) machine: BTreeMap<String, String>,
    /// Every measurement, in the order taken.
    pub(crate) measurements: Vec<Measurement>,
    /// Peak RSS (VmHWM) in MiB by process.
    pub(crate) memory_mib: BTreeMap<String, f64>,
    /// Figures that are neither a rate nor a latency (the rebuild's ETA error), by name.
    pub(crate) figures: BTreeMap<String, f64>,
    /// Each target with its verdict.
    pub(crate) targets: Vec<Target>,
    /// Caveats worth reading beside the numbers.
    pub(crate) notes: Vec<String>,
    /// The phases run when not all were (`--only`); targets of the others show as skipped.
    pub(crate) only: Option<String>,
}

/// One target and whether it holds.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Target {
    /// What must hold.
    pub(crate) requirement: String,
    /// The measured value (a rate, a ratio or a latency, as the requirement says).
    pub(crate) measured: Option<f64>,
    /// The baseline it is compared with, when the target is a ratio.
    pub(crate) baseline: Option<f64>,
    /// measured / baseline, when the target is a ratio.
    pub(crate) ratio: Option<f64>,
    /// Whether it holds; false also when a measurement is missing.
    pub(crate) holds: bool,
    /// The same measurement against a second baseline, for information (not in the verdict).
    pub(crate) beside: Option<Beside>,
}

/// A ratio printed beside a target, informational.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Beside {
    /// The second baseline's measurement name.
    pub(crate) baseline: String,
    /// Its rate.
    pub(crate) rate: Option<f64>,
    /// The target's measured rate / that rate.
    pub(crate) ratio: Option<f64>,
}

impl Report {
    /// The measurement called `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&Measurement> {
        self.measurements.iter().find(|m| m.name == name)
    }

    /// `rate(measured) >= min_ratio * rate(baseline)`.
    pub(crate) fn ratio_target(
        &mut self,
        requirement: &str,
        measured: &str,
        baseline: &str,
        min_ratio: f64,
    ) {
        let value = self.get(measured).map(|m| m.rate_per_s);
        let base = self.get(baseline).map(|m| m.rate_per_s);
        let ratio = value.zip(base).map(|(v, b)| v / b.max(1e-9));
        self.targets.push(Target {
            requirement: requirement.to_owned(),
            measured: value,
            baseline: base,
            ratio,
            holds: ratio.is_some_and(|r| r >= min_ratio),
            beside: None,
        });
    }

    /// Adds to the last target its measured rate's ratio to `baseline`'s, for information.
    pub(crate) fn beside_last(&mut self, baseline: &str) {
        let rate = self.get(baseline).map(|m| m.rate_per_s);
        if let Some(target) = self.targets.last_mut() {
            let ratio = target.measured.zip(rate).map(|(v, b)| v / b.max(1e-9));
            target.beside = Some(Beside {
                baseline: baseline.to_owned(),
                rate,
                ratio,
            });
        }
    }

    /// `value <= max` (`at_least` false) or `value >= limit` (`at_least` true).
    pub(crate) fn bound_target(
        &mut self,
        requirement: &str,
        value: Option<f64>,
        limit: f64,
        at_least: bool,
    ) {
        let holds = value.is_some_and(|v| if at_least { v >= limit } else { v <= limit });
        self.targets.push(Target {
            requirement: requirement.to_owned(),
            measured: value,
            baseline: None,
            ratio: None,
            holds,
            beside: None,
        });
    }

    /// Writes the JSON report, creating its directory.
    pub(crate) fn write(&self, path: &Path) -> anyhow::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(path, serde_json::to_vec_pretty(self)?)?;
        Ok(())
    }

    /// The human-readable table.
    pub(crate) fn table(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "\nWarden benchmark ({} mode)", self.mode);
        for (key, value) in &self.machine {
            let _ = writeln!(out, "  {key}: {value}");
        }
        let _ = writeln!(
            out,
            "\n{:<31} {:>10} {:>14} {:>10} {:>10} {:>7}",
            "measurement", "count", "rate/s", "p50 ms", "p99 ms", "errors"
        );
        let ms = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{v:.2}"));
        for m in &self.measurements {
            let _ = writeln!(
                out,
                "{:<31} {:>10} {:>14} {:>10} {:>10} {:>7}",
                m.name,
                m.count,
                format!("{:.0} {}", m.rate_per_s, short(&m.unit)),
                ms(m.p50_ms),
                ms(m.p99_ms),
                m.errors
            );
        }
        let _ = writeln!(out, "\npeak RSS (VmHWM)");
        for (process, mib) in &self.memory_mib {
            let _ = writeln!(out, "  {process:<34} {mib:>8.1} MiB");
        }
        let _ = writeln!(out, "\ntargets");
        for t in &self.targets {
            let mut detail = match (t.ratio, t.measured, t.baseline) {
                (Some(r), Some(v), Some(b)) => format!("{v:.0} vs {b:.0} = {r:.2}x"),
                (_, Some(v), _) => format!("{v:.2}"),
                _ => "not measured".to_owned(),
            };
            if let Some(Beside {
                baseline,
                rate: Some(b),
                ratio: Some(r),
            }) = &t.beside
            {
                let _ = write!(detail, " (vs {baseline} {b:.0} = {r:.2}x, informational)");
            }
            let verdict = match (t.holds, t.measured, &self.only) {
                (true, _, _) => "PASS",
                (false, None, Some(_)) => "SKIP",
                (false, _, _) => "MISS",
            };
            let _ = writeln!(out, "  {verdict}  {:<58} {detail}", t.requirement);
        }
        for note in &self.notes {
            let _ = writeln!(out, "note: {note}");
        }
        out
    }
}

fn short(unit: &str) -> &str {
    unit.split_whitespace().next().unwrap_or(unit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn rate(name: &str, count: u64) -> Measurement {
        Measurement::new(name, "", "records", count, Duration::from_secs(1), None, 0)
    }

    #[test]
    fn a_second_baseline_is_printed_beside_without_changing_the_verdict() {
        let mut report = Report::default();
        report
            .measurements
            .extend([rate("catch_up", 160), rate("one", 100), rate("two", 200)]);
        report.ratio_target("catch-up >= 1.6 x one", "catch_up", "one", 1.6);
        report.beside_last("two");
        let target = &report.targets[0];
        assert!(target.holds, "1.6 x one holds, whatever two is");
        let beside = target.beside.as_ref().expect("beside");
        assert_eq!(beside.ratio, Some(0.8));
        assert!(
            report
                .table()
                .contains("(vs two 200 = 0.80x, informational)")
        );

        report.beside_last("missing");
        assert!(!report.table().contains("informational"));
    }
}
