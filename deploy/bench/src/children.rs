//! The services as child processes of this binary (`warden-bench serve <service>`), so each
//! one's peak RSS is its own.

use crate::serve::Service;
use anyhow::Context;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::process::{Child, Command};

/// A running service.
pub(crate) struct ServiceProcess {
    /// Which service.
    pub(crate) service: Service,
    /// Its base URL on loopback.
    pub(crate) base_url: String,
    child: Child,
}

impl ServiceProcess {
    /// Starts `service` with `env` on a free loopback port and waits until `/healthz` answers;
    /// it logs to `<service>.log` in `log_dir`.
    pub(crate) async fn start(
        service: Service,
        env: &[(&str, String)],
        log_dir: &Path,
    ) -> anyhow::Result<ServiceProcess> {
        Self::start_logging_to(
            service,
            env,
            &log_dir.join(format!("{}.log", service.name())),
        )
        .await
    }

    /// Starts `service` like [`ServiceProcess::start`], logging to `log`.
    pub(crate) async fn start_logging_to(
        service: Service,
        env: &[(&str, String)],
        log: &Path,
    ) -> anyhow::Result<ServiceProcess> {
        let port = free_port()?;
        let log = std::fs::File::create(log)?;
        let child = Command::new(std::env::current_exe()?)
            .args(["serve", service.name()])
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .env("BIND_ADDR", format!("127.0.0.1:{port}"))
            .env(
                "RUST_LOG",
                std::env::var("BENCH_SERVICE_LOG").unwrap_or_else(|_| "warn".into()),
            )
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting {}", service.name()))?;
        let mut process = ServiceProcess {
            service,
            base_url: format!("http://127.0.0.1:{port}"),
            child,
        };
        process.wait_healthy().await?;
        Ok(process)
    }

    async fn wait_healthy(&mut self) -> anyhow::Result<()> {
        let client = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait()? {
                anyhow::bail!("{} exited during start-up: {status}", self.service.name());
            }
            let url = format!("{}/healthz", self.base_url);
            if let Ok(response) = client.get(url).send().await
                && response.status().is_success()
            {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        anyhow::bail!(
            "{} did not answer /healthz within 60 s",
            self.service.name()
        )
    }

    /// Its process id (0 once it has exited).
    pub(crate) fn pid(&self) -> u32 {
        self.child.id().unwrap_or(0)
    }

    /// Its peak resident set (VmHWM) so far, in MiB.
    pub(crate) fn peak_rss_mib(&self) -> Option<f64> {
        status_kib(self.child.id()?, "VmHWM:").map(|kib| kib as f64 / 1024.0)
    }

    /// Its resident set (VmRSS) now, in MiB.
    pub(crate) fn rss_mib(&self) -> Option<f64> {
        status_kib(self.child.id()?, "VmRSS:").map(|kib| kib as f64 / 1024.0)
    }

    /// SIGTERM, then SIGKILL after 10 s.
    pub(crate) async fn stop(mut self) {
        if let Some(pid) = self.child.id() {
            let _ = Command::new("kill")
                .args(["-TERM", &pid.to_string()])
                .status()
                .await;
        }
        if tokio::time::timeout(Duration::from_secs(10), self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
    }
}

/// This process's own peak RSS in MiB.
pub(crate) fn own_peak_rss_mib() -> Option<f64> {
    status_kib(std::process::id(), "VmHWM:").map(|kib| kib as f64 / 1024.0)
}

/// This process's own RSS now, in MiB.
pub(crate) fn own_rss_mib() -> Option<f64> {
    status_kib(std::process::id(), "VmRSS:").map(|kib| kib as f64 / 1024.0)
}

/// Starts this process's peak RSS (VmHWM) again from its RSS now (Linux's `clear_refs` 5),
/// so the next [`own_peak_rss_mib`] tells the peak of what runs from here; false when the
/// kernel refused.
pub(crate) fn reset_own_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
}

/// A loopback port that was free a moment ago.
pub(crate) fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind(("127.0.0.1", 0))?
        .local_addr()?
        .port())
}
