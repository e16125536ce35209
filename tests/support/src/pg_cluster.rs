//! A private PostgreSQL cluster for a test that must crash the server itself.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use tokio::process::Command;
use uuid::Uuid;

use crate::TestDb;

const READY_TIMEOUT: Duration = Duration::from_secs(30);
const POLL_INTERVAL: Duration = Duration::from_millis(50);

/// A throw-away PostgreSQL cluster (initdb in a temp dir, trust auth, superuser `postgres`) on
/// a free loopback port, so a test can SIGKILL and restart it without touching anyone else's
/// database; stopped and removed on drop. As root, its tools run as the `postgres` user
/// (PostgreSQL refuses root), like `deploy/lib.sh` does.
#[derive(Debug)]
pub struct PgCluster {
    bin: PathBuf,
    dir: PathBuf,
    port: u16,
    as_postgres: bool,
}

impl PgCluster {
    /// Creates and starts the cluster (a few seconds: initdb, then start-up).
    pub async fn start() -> anyhow::Result<PgCluster> {
        let bin = pg_bin()?;
        let dir = std::env::temp_dir().join(format!("pg-test-{}", Uuid::new_v4().simple()));
        std::fs::create_dir_all(dir.join("run"))
            .with_context(|| format!("creating {}", dir.display()))?;
        let as_postgres = is_root().await;
        let cluster = PgCluster {
            bin,
            dir,
            port: crate::free_port(),
            as_postgres,
        };
        if as_postgres {
            run(Command::new("chown")
                .arg("-R")
                .arg("postgres:postgres")
                .arg(&cluster.dir))
            .await?;
        }
        let data = cluster.data();
        cluster
            .pg(
                "initdb",
                &[
                    "-D",
                    path_str(&data)?,
                    "--auth=trust",
                    "-U",
                    "postgres",
                    "--encoding=UTF8",
                    "--locale=C.UTF-8",
                ],
            )
            .await?;
        cluster.launch().await?;
        Ok(cluster)
    }

    /// The superuser URL of its `postgres` database.
    pub fn admin_url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// A fresh database on this cluster.
    pub async fn create_db(&self) -> anyhow::Result<TestDb> {
        TestDb::create_on(&self.admin_url()).await
    }

    /// SIGKILLs the postmaster (like a crash of the server); `restart` recovers it.
    pub async fn kill(&mut self) -> anyhow::Result<()> {
        let pid_file = self.data().join("postmaster.pid");
        let pid = std::fs::read_to_string(&pid_file)
            .with_context(|| format!("reading {}", pid_file.display()))?;
        let pid = pid.lines().next().unwrap_or_default().trim().to_owned();
        run(Command::new("kill").arg("-9").arg(&pid)).await?;
        let deadline = Instant::now() + READY_TIMEOUT;
        while Path::new(&format!("/proc/{pid}")).exists() {
            if Instant::now() >= deadline {
                bail!("postmaster {pid} still alive after SIGKILL");
            }
            tokio::time::sleep(POLL_INTERVAL).await;
        }
        Ok(())
    }

    /// Starts the server again on the same port and data (crash recovery runs first).
    pub async fn restart(&mut self) -> anyhow::Result<()> {
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            // Backends of a killed postmaster exit on their own; until they have, start-up
            // refuses the old shared memory, so retry.
            match self.launch().await {
                Ok(()) => return Ok(()),
                Err(_) if Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                Err(error) => return Err(error),
            }
        }
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    async fn launch(&self) -> anyhow::Result<()> {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100",
            self.port,
            self.dir.join("run").display()
        );
        let data = self.data();
        let log = self.dir.join("postgres.log");
        self.pg(
            "pg_ctl",
            &[
                "-D",
                path_str(&data)?,
                "-l",
                path_str(&log)?,
                "-o",
                &options,
                "-w",
                "-t",
                "30",
                "start",
            ],
        )
        .await
        .with_context(|| {
            let tail = std::fs::read_to_string(&log).unwrap_or_default();
            let tail: String = tail.lines().rev().take(10).collect::<Vec<_>>().join("\n");
            format!(
                "starting PostgreSQL on port {}; log (last lines first):\n{tail}",
                self.port
            )
        })
    }

    async fn pg(&self, tool: &str, args: &[&str]) -> anyhow::Result<()> {
        let tool = self.bin.join(tool);
        let mut command = if self.as_postgres {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(&tool);
            command
        } else {
            Command::new(&tool)
        };
        command.args(args).current_dir(&self.dir);
        run(&mut command).await
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        let pg_ctl = self.bin.join("pg_ctl");
        let data = self.data();
        let mut command = if self.as_postgres {
            let mut command = std::process::Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(pg_ctl);
            command
        } else {
            std::process::Command::new(pg_ctl)
        };
        let _ = command
            .arg("-D")
            .arg(&data)
            .args(["-m", "immediate", "-w", "stop"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

async fn run(command: &mut Command) -> anyhow::Result<()> {
    let output = command
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .with_context(|| format!("running {command:?}"))?;
    if !output.status.success() {
        bail!(
            "{command:?} failed ({}): {}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(())
}

async fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .await
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn path_str(path: &Path) -> anyhow::Result<&str> {
    path.to_str()
        .with_context(|| format!("{} is not UTF-8", path.display()))
}

/// The newest `/usr/lib/postgresql/*/bin` (where Debian puts initdb and pg_ctl).
fn pg_bin() -> anyhow::Result<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .context("PostgreSQL is not installed in /usr/lib/postgresql: run ./deploy/test.sh")?
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions
        .pop()
        .map(|(_, bin)| bin)
        .context("no /usr/lib/postgresql/*/bin/initdb found: run ./deploy/test.sh")
}
