//! Where the CPU went during a phase: each process's user+system time from `/proc`, and the
//! whole machine's busy time, so a missed target can be read against who was using the cores.

use std::time::Instant;

/// Clock ticks per second of `/proc` times (USER_HZ, 100 on Linux).
const TICKS_PER_SECOND: f64 = 100.0;

/// CPU seconds used so far by the process `pid` (user + system), if it exists.
pub(crate) fn process_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may contain spaces; the fields after it are space separated.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let user: f64 = fields.get(11)?.parse().ok()?;
    let system: f64 = fields.get(12)?.parse().ok()?;
    Some((user + system) / TICKS_PER_SECOND)
}

/// CPU seconds of a process and all its children (live ones, and those it has reaped), e.g.
/// PostgreSQL's postmaster and its backends.
pub(crate) fn tree_seconds(root: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{root}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let reaped: f64 = fields.get(13)?.parse::<f64>().ok()? + fields.get(14)?.parse::<f64>().ok()?;
    let mut total = process_seconds(root)? + reaped / TICKS_PER_SECOND;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let parent = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| s.rfind(')').and_then(|i| s.get(i + 2..).map(str::to_owned)))
            .and_then(|rest| {
                rest.split_whitespace()
                    .nth(1)
                    .and_then(|p| p.parse::<u32>().ok())
            });
        if parent == Some(root) {
            total += process_seconds(pid).unwrap_or(0.0);
        }
    }
    Some(total)
}

/// A process's CPU seconds: with its children, unless it is this process.
fn seconds(pid: u32) -> Option<f64> {
    if pid == std::process::id() {
        process_seconds(pid)
    } else {
        tree_seconds(pid)
    }
}

/// Busy CPU seconds of the whole machine so far (all cores; everything but idle and iowait).
pub(crate) fn machine_busy_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let line = stat.lines().next()?.strip_prefix("cpu ")?;
    let ticks: Vec<f64> = line
        .split_whitespace()
        .filter_map(|t| t.parse().ok())
        .collect();
    let total: f64 = ticks.iter().take(8).sum();
    let idle = ticks.get(3)? + ticks.get(4)?;
    Some((total - idle) / TICKS_PER_SECOND)
}

/// A snapshot of named processes' CPU time and the machine's, to diff later.
pub(crate) struct CpuSnapshot {
    at: Instant,
    processes: Vec<(String, u32, f64)>,
    machine: f64,
}

impl CpuSnapshot {
    /// Takes the snapshot of `processes` (name, pid). Each counts with its children, except
    /// this process, whose children are the services (counted on their own).
    pub(crate) fn take(processes: &[(&str, u32)]) -> CpuSnapshot {
        CpuSnapshot {
            at: Instant::now(),
            processes: processes
                .iter()
                .map(|(name, pid)| ((*name).to_owned(), *pid, seconds(*pid).unwrap_or(0.0)))
                .collect(),
            machine: machine_busy_seconds().unwrap_or(0.0),
        }
    }

    /// "name N.N cores" for each process since the snapshot, and the machine's total.
    pub(crate) fn since(&self) -> String {
        let wall = self.at.elapsed().as_secs_f64().max(1e-9);
        let mut parts: Vec<String> = self
            .processes
            .iter()
            .map(|(name, pid, before)| {
                let used = seconds(*pid).unwrap_or(*before) - before;
                format!("{name} {:.2}", used / wall)
            })
            .collect();
        let machine = machine_busy_seconds().unwrap_or(self.machine) - self.machine;
        parts.push(format!("whole machine {:.2}", machine / wall));
        format!("cores busy: {}", parts.join(", "))
    }
}
