//! A private nats-server process per test.

use std::fs::{self, OpenOptions};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;
use uuid::Uuid;

const READY_TIMEOUT: Duration = Duration::from_secs(10);
const POLL_INTERVAL: Duration = Duration::from_millis(20);
/// How often `start` tries a new port when the one it picked was taken in the meantime.
const START_ATTEMPTS: usize = 3;
const INSTALL_HINT: &str = "run the tests with ./deploy/test.sh, which installs nats-server into \
     .local/venv and sets NATS_SERVER_BIN (or set NATS_SERVER_BIN to a nats-server >= 2.14 yourself)";

/// A private nats-server (JetStream, file storage, `sync_interval: always`, max_payload 8MB) on a
/// free loopback port, in its own temp dir; killed on drop (and the dir removed).
#[derive(Debug)]
pub struct NatsServer {
    bin: PathBuf,
    dir: PathBuf,
    port: u16,
    /// Put in the config and checked in the INFO greeting, so a readiness probe can never be
    /// answered by some other process that grabbed the port.
    name: String,
    child: Option<Child>,
}

impl NatsServer {
    /// Starts the server and waits until it accepts client connections (10 s deadline).
    pub async fn start() -> anyhow::Result<NatsServer> {
        let bin = nats_server_bin()?;
        let id = Uuid::new_v4().simple().to_string();
        let dir = std::env::temp_dir().join(format!("nats-test-{id}"));
        fs::create_dir_all(dir.join("store"))
            .with_context(|| format!("creating {}", dir.display()))?;
        // From here on, Drop removes the dir whatever happens.
        let mut server = NatsServer {
            bin,
            dir,
            port: 0,
            name: format!("test-{id}"),
            child: None,
        };
        let mut attempt = 0;
        loop {
            attempt += 1;
            server.port = crate::free_port();
            server.write_config()?;
            match server.spawn().await {
                Ok(()) => return Ok(server),
                // The port picked by free_port can be taken before nats-server binds it.
                Err(_)
                    if attempt < START_ATTEMPTS
                        && server.log().contains("address already in use") =>
                {
                    server.kill();
                }
                Err(err) => return Err(err),
            }
        }
    }

    /// `nats://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// SIGKILLs the server (like a crash); the store dir is kept for `restart`.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            // Errors mean it has already exited; wait() reaps it either way.
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Freezes the server (SIGSTOP): connections stay open and nothing is answered, as on a
    /// host that hangs, until [`resume`](Self::resume).
    pub fn pause(&self) -> anyhow::Result<()> {
        self.signal("-STOP")
    }

    /// Lets a [`pause`](Self::pause)d server go on (SIGCONT).
    pub fn resume(&self) -> anyhow::Result<()> {
        self.signal("-CONT")
    }

    fn signal(&self, signal: &str) -> anyhow::Result<()> {
        let child = self.child.as_ref().context("nats-server is not running")?;
        let status = Command::new("kill")
            .arg(signal)
            .arg(child.id().to_string())
            .status()
            .context("running kill")?;
        anyhow::ensure!(status.success(), "kill {signal} failed: {status}");
        Ok(())
    }

    /// Starts the server again on the same port and store dir (killing it first if it runs).
    pub async fn restart(&mut self) -> anyhow::Result<()> {
        self.kill();
        self.spawn().await
    }

    fn write_config(&self) -> anyhow::Result<()> {
        let config = format!(
            "server_name: \"{name}\"\n\
             listen: 127.0.0.1:{port}\n\
             max_payload: 8MB\n\
             jetstream {{ store_dir: \"{store}\", sync_interval: always }}\n",
            name = self.name,
            port = self.port,
            store = self.dir.join("store").display(),
        );
        let path = self.dir.join("nats.conf");
        fs::write(&path, config).with_context(|| format!("writing {}", path.display()))
    }

    async fn spawn(&mut self) -> anyhow::Result<()> {
        let log_path = self.dir.join("nats.log");
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .with_context(|| format!("opening {}", log_path.display()))?;
        let child = Command::new(&self.bin)
            .arg("-c")
            .arg(self.dir.join("nats.conf"))
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .with_context(|| format!("cannot run {}: {INSTALL_HINT}", self.bin.display()))?;
        self.child = Some(child);
        self.wait_until_ready().await
    }

    async fn wait_until_ready(&mut self) -> anyhow::Result<()> {
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            if let Some(child) = self.child.as_mut()
                && let Some(status) = child.try_wait()?
            {
                self.child = None;
                bail!(
                    "nats-server exited ({status}) before accepting connections on port {}; log:\n{}",
                    self.port,
                    self.log()
                );
            }
            if greets_as(self.port, &self.name).await {
                return Ok(());
            }
            if Instant::now() >= deadline {
                bail!(
                    "nats-server did not accept connections on port {} within {READY_TIMEOUT:?}; log:\n{}",
                    self.port,
                    self.log()
                );
            }
            tokio::time::sleep(POLL_INTERVAL).await;
        }
    }

    fn log(&self) -> String {
        fs::read_to_string(self.dir.join("nats.log")).unwrap_or_default()
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        self.kill();
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// True when a NATS server named `name` answers on the port with its INFO greeting.
pub(crate) async fn greets_as(port: u16, name: &str) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)).await else {
        return false;
    };
    let mut greeting = Vec::new();
    let read = async {
        let mut buf = [0u8; 4096];
        while !greeting.ends_with(b"\r\n") && greeting.len() < 64 * 1024 {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => greeting.extend_from_slice(&buf[..n]),
            }
        }
    };
    if tokio::time::timeout(Duration::from_secs(1), read)
        .await
        .is_err()
    {
        return false;
    }
    let greeting = String::from_utf8_lossy(&greeting);
    greeting.starts_with("INFO ") && greeting.contains(&format!("\"server_name\":\"{name}\""))
}

/// `NATS_SERVER_BIN`, else `<workspace>/.local/venv/bin/nats-server`, else `nats-server` on
/// PATH; checked once per test binary by running `--version`.
pub(crate) fn nats_server_bin() -> anyhow::Result<PathBuf> {
    static BIN: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BIN.get_or_init(|| find_nats_server_bin().map_err(|err| format!("{err:#}")))
        .clone()
        .map_err(anyhow::Error::msg)
}

fn find_nats_server_bin() -> anyhow::Result<PathBuf> {
    if let Some(bin) = std::env::var_os("NATS_SERVER_BIN") {
        return check_runs(PathBuf::from(bin)).context("NATS_SERVER_BIN does not work");
    }
    let venv_bin = workspace_root().join(".local/venv/bin/nats-server");
    if venv_bin.exists() {
        return check_runs(venv_bin);
    }
    check_runs(PathBuf::from("nats-server"))
}

fn check_runs(bin: PathBuf) -> anyhow::Result<PathBuf> {
    let output = Command::new(&bin)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run `{}`: {INSTALL_HINT}", bin.display()))?;
    if !output.status.success() {
        bail!(
            "`{} --version` failed ({}): {INSTALL_HINT}",
            bin.display(),
            output.status
        );
    }
    Ok(bin)
}

fn workspace_root() -> &'static Path {
    // This crate lives at <root>/tests/support.
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir
        .parent()
        .and_then(Path::parent)
        .unwrap_or(manifest_dir)
}

#[cfg(test)]
mod tests {
    use super::NatsServer;
    use async_nats::jetstream::{self, stream::StorageType};

    #[tokio::test]
    async fn jetstream_data_survives_kill_and_restart() -> anyhow::Result<()> {
        let mut server = NatsServer::start().await?;
        let dir = server.dir.clone();
        assert!(server.url().starts_with("nats://127.0.0.1:"));

        let client = async_nats::connect(server.url()).await?;
        let js = jetstream::new(client.clone());
        js.create_stream(jetstream::stream::Config {
            name: "HARNESS".to_string(),
            subjects: vec!["harness.>".to_string()],
            storage: StorageType::File,
            ..Default::default()
        })
        .await?;
        js.publish("harness.a", "before crash".into())
            .await?
            .await?;
        drop(js);
        drop(client);

        let port = server.port;
        server.kill();
        assert!(
            tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_err(),
            "port still answers after kill"
        );
        assert!(dir.join("store").exists(), "kill must keep the store dir");

        server.restart().await?;
        assert_eq!(server.port, port, "restart must reuse the port");
        let js = jetstream::new(async_nats::connect(server.url()).await?);
        let stream = js.get_stream("HARNESS").await?;
        let message = stream.get_raw_message(1).await?;
        assert_eq!(&message.payload[..], b"before crash");

        drop(server);
        assert!(!dir.exists(), "drop must remove the temp dir");
        Ok(())
    }

    #[tokio::test]
    async fn accepts_payloads_up_to_8mb() -> anyhow::Result<()> {
        let server = NatsServer::start().await?;
        let client = async_nats::connect(server.url()).await?;
        assert_eq!(client.server_info().max_payload, 8 * 1024 * 1024);
        Ok(())
    }
}
