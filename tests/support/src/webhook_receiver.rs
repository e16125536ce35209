//! The webhook receiver the alert tests deliver to: `tests/webhooks/receiver.py`, a separate
//! process that checks every signature with the `standardwebhooks` package from PyPI (the
//! reference implementation, not ours). A test can kill it, start it again on the same port
//! (what it received survives in its log file), switch it between answering 200, 503 and
//! never answering, and wait for a number of verified deliveries.

use std::collections::BTreeMap;
use std::fs::{self, OpenOptions};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::{Value, json};
use uuid::Uuid;

const READY_TIMEOUT: Duration = Duration::from_secs(10);
const POLL_INTERVAL: Duration = Duration::from_millis(20);
const START_ATTEMPTS: usize = 3;
const INSTALL_HINT: &str = "run the tests with ./deploy/test.sh, which installs standardwebhooks \
     into .local/venv (or set WEBHOOK_RECEIVER_PYTHON to a python with standardwebhooks 1.1.0)";

/// What the receiver answers a delivery with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReceiverMode {
    /// 200.
    Ok,
    /// 503.
    Fail,
    /// Nothing: holds the connection until the client gives up.
    Hang,
}

impl ReceiverMode {
    fn as_str(self) -> &'static str {
        match self {
            ReceiverMode::Ok => "ok",
            ReceiverMode::Fail => "fail",
            ReceiverMode::Hang => "hang",
        }
    }
}

/// One request the receiver got, as it recorded it.
#[derive(Debug, Clone)]
pub struct Received {
    /// 1, 2, ... in arrival order (across restarts).
    pub seq: u64,
    /// The request path.
    pub path: String,
    /// The `webhook-id` header.
    pub webhook_id: Option<String>,
    /// The `webhook-timestamp` header.
    pub webhook_timestamp: Option<String>,
    /// The `webhook-signature` header.
    pub webhook_signature: Option<String>,
    /// The `user-agent` header.
    pub user_agent: Option<String>,
    /// The `content-type` header.
    pub content_type: Option<String>,
    /// The body's `type`.
    pub event_type: Option<String>,
    /// The `standardwebhooks` verdict under the receiver's secrets.
    pub verified: bool,
    /// Why it did not verify.
    pub error: Option<String>,
    /// Arrival, unix seconds.
    pub received_at: f64,
    /// The answer's status (`None`: the receiver hung).
    pub status: Option<u16>,
    /// The body (JSON, or the raw text if it was not JSON).
    pub body: Value,
    /// The body's bytes exactly as received, base64-encoded.
    pub raw_body_b64: Option<String>,
}

impl Received {
    fn from_json(value: &Value) -> Received {
        let text = |key: &str| value[key].as_str().map(str::to_owned);
        Received {
            seq: value["seq"].as_u64().unwrap_or_default(),
            path: text("path").unwrap_or_default(),
            webhook_id: text("webhook_id"),
            webhook_timestamp: text("webhook_timestamp"),
            webhook_signature: text("webhook_signature"),
            user_agent: text("user_agent"),
            content_type: text("content_type"),
            event_type: text("type"),
            verified: value["verified"].as_bool().unwrap_or(false),
            error: text("error"),
            received_at: value["received_at"].as_f64().unwrap_or_default(),
            status: value["status"]
                .as_u64()
                .and_then(|status| u16::try_from(status).ok()),
            body: value["body"].clone(),
            raw_body_b64: text("raw_body_b64"),
        }
    }

    /// Verified and answered 200: a delivery the sender counts as done.
    pub fn accepted(&self) -> bool {
        self.verified && self.status == Some(200)
    }
}

/// Requests grouped by `webhook-id` (in order of first arrival within each group).
pub fn by_webhook_id(received: &[Received]) -> BTreeMap<String, Vec<Received>> {
    let mut groups: BTreeMap<String, Vec<Received>> = BTreeMap::new();
    for request in received {
        let id = request.webhook_id.clone().unwrap_or_default();
        groups.entry(id).or_default().push(request.clone());
    }
    groups
}

/// A running `receiver.py` on a free loopback port, in its own temp dir; killed on drop.
#[derive(Debug)]
pub struct WebhookReceiver {
    python: PathBuf,
    dir: PathBuf,
    port: u16,
    name: String,
    secrets: Vec<String>,
    mode: ReceiverMode,
    child: Option<Child>,
    http: reqwest::Client,
}

impl WebhookReceiver {
    /// Starts a receiver (mode ok, no secret yet) and waits until it answers.
    pub async fn start() -> anyhow::Result<WebhookReceiver> {
        let python = receiver_python()?;
        let id = Uuid::new_v4().simple().to_string();
        let dir = std::env::temp_dir().join(format!("webhook-receiver-{id}"));
        fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let mut receiver = WebhookReceiver {
            python,
            dir,
            port: 0,
            name: format!("receiver-{id}"),
            secrets: Vec::new(),
            mode: ReceiverMode::Ok,
            child: None,
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(5))
                .build()?,
        };
        let mut attempt = 0;
        loop {
            attempt += 1;
            receiver.port = crate::free_port();
            match receiver.spawn().await {
                Ok(()) => return Ok(receiver),
                Err(_)
                    if attempt < START_ATTEMPTS
                        && receiver.log().contains("Address already in use") =>
                {
                    receiver.kill();
                }
                Err(err) => return Err(err),
            }
        }
    }

    /// The URL to deliver to: `http://127.0.0.1:PORT/hook`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/hook", self.port)
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Verifies deliveries with these secrets (any one of them suffices); kept across restarts.
    /// While it is killed, the setting waits for [`Self::restart`].
    pub async fn set_secrets(&mut self, secrets: &[&str]) -> anyhow::Result<()> {
        self.secrets = secrets.iter().map(|s| (*s).to_owned()).collect();
        if self.child.is_none() {
            return Ok(());
        }
        self.control("config", json!({ "secrets": self.secrets }))
            .await
            .map(drop)
    }

    /// Answers deliveries this way from now on; kept across restarts. While it is killed, the
    /// setting waits for [`Self::restart`].
    pub async fn set_mode(&mut self, mode: ReceiverMode) -> anyhow::Result<()> {
        self.mode = mode;
        if self.child.is_none() {
            return Ok(());
        }
        self.control("config", json!({ "mode": mode.as_str() }))
            .await
            .map(drop)
    }

    /// Forgets everything received so far.
    pub async fn clear(&self) -> anyhow::Result<()> {
        self.control("clear", json!({})).await.map(drop)
    }

    /// Everything received so far, in arrival order.
    pub async fn received(&self) -> anyhow::Result<Vec<Received>> {
        let body: Value = self
            .http
            .get(format!("http://127.0.0.1:{}/_control/received", self.port))
            .send()
            .await
            .context("reading the receiver's records")?
            .error_for_status()?
            .json()
            .await?;
        let requests = body["requests"]
            .as_array()
            .context("the receiver's records have no `requests`")?;
        Ok(requests.iter().map(Received::from_json).collect())
    }

    /// Polls until `done` holds for what was received, or fails after `deadline` showing it.
    pub async fn wait_until(
        &self,
        deadline: Duration,
        what: &str,
        mut done: impl FnMut(&[Received]) -> bool,
    ) -> anyhow::Result<Vec<Received>> {
        let until = Instant::now() + deadline;
        loop {
            // A receiver being restarted does not answer for a moment: poll on.
            if let Ok(received) = self.received().await
                && done(&received)
            {
                return Ok(received);
            }
            if Instant::now() >= until {
                let received = self.received().await.unwrap_or_default();
                bail!(
                    "the receiver did not see {what} within {deadline:?}; it has {} requests: {:#?}",
                    received.len(),
                    received
                        .iter()
                        .map(|r| (&r.webhook_id, &r.event_type, r.verified, &r.error, r.status))
                        .collect::<Vec<_>>()
                );
            }
            tokio::time::sleep(POLL_INTERVAL).await;
        }
    }

    /// Waits until `n` distinct `webhook-id`s were each accepted (verified and answered 200);
    /// returns everything received by then.
    pub async fn wait_for_verified(
        &self,
        n: usize,
        deadline: Duration,
    ) -> anyhow::Result<Vec<Received>> {
        self.wait_until(deadline, &format!("{n} verified deliveries"), |received| {
            accepted_ids(received) >= n
        })
        .await
    }

    /// SIGKILLs the receiver: the port refuses connections until [`Self::restart`].
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            // An error means it has exited already; wait() reaps it either way.
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port, with the same secrets, mode and records.
    pub async fn restart(&mut self) -> anyhow::Result<()> {
        self.kill();
        self.spawn().await
    }

    async fn control(&self, action: &str, body: Value) -> anyhow::Result<Value> {
        let response = self
            .http
            .post(format!("http://127.0.0.1:{}/_control/{action}", self.port))
            .json(&body)
            .send()
            .await
            .with_context(|| format!("receiver control {action}"))?;
        let status = response.status();
        let answer: Value = response.json().await.unwrap_or(Value::Null);
        anyhow::ensure!(
            status.is_success(),
            "receiver control {action}: {status} {answer}"
        );
        Ok(answer)
    }

    async fn spawn(&mut self) -> anyhow::Result<()> {
        let log_path = self.dir.join("receiver.log");
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .with_context(|| format!("opening {}", log_path.display()))?;
        let mut command = Command::new(&self.python);
        command
            .arg(receiver_script())
            .arg("--port")
            .arg(self.port.to_string())
            .arg("--name")
            .arg(&self.name)
            .arg("--log")
            .arg(self.dir.join("received.jsonl"))
            .arg("--mode")
            .arg(self.mode.as_str());
        for secret in &self.secrets {
            command.arg("--secret").arg(secret);
        }
        let child = command
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .with_context(|| format!("cannot run {}: {INSTALL_HINT}", self.python.display()))?;
        self.child = Some(child);
        self.wait_until_ready().await
    }

    async fn wait_until_ready(&mut self) -> anyhow::Result<()> {
        let deadline = Instant::now() + READY_TIMEOUT;
        let health = format!("http://127.0.0.1:{}/_control/health", self.port);
        loop {
            if let Some(child) = self.child.as_mut()
                && let Some(status) = child.try_wait()?
            {
                self.child = None;
                bail!(
                    "the webhook receiver exited ({status}) on port {}; log:\n{}",
                    self.port,
                    self.log()
                );
            }
            // Checks the name, so another process on the port is never taken for ours.
            if let Ok(response) = self.http.get(&health).send().await
                && let Ok(body) = response.json::<Value>().await
                && body["name"] == self.name.as_str()
            {
                return Ok(());
            }
            if Instant::now() >= deadline {
                bail!(
                    "the webhook receiver did not answer on port {} within {READY_TIMEOUT:?}; log:\n{}",
                    self.port,
                    self.log()
                );
            }
            tokio::time::sleep(POLL_INTERVAL).await;
        }
    }

    fn log(&self) -> String {
        fs::read_to_string(self.dir.join("receiver.log")).unwrap_or_default()
    }
}

impl Drop for WebhookReceiver {
    fn drop(&mut self) {
        self.kill();
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// How many distinct `webhook-id`s were accepted at least once.
pub fn accepted_ids(received: &[Received]) -> usize {
    by_webhook_id(received)
        .values()
        .filter(|group| group.iter().any(Received::accepted))
        .count()
}

fn receiver_script() -> PathBuf {
    // This crate lives at <root>/tests/support; the receiver at <root>/tests/webhooks.
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../webhooks/receiver.py")
}

/// `WEBHOOK_RECEIVER_PYTHON`, else the python beside `NATS_SERVER_BIN` (both live in
/// .local/venv), else `<workspace>/.local/venv/bin/python`; checked once per test binary by
/// importing standardwebhooks.
fn receiver_python() -> anyhow::Result<PathBuf> {
    static PYTHON: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    PYTHON
        .get_or_init(|| find_python().map_err(|err| format!("{err:#}")))
        .clone()
        .map_err(anyhow::Error::msg)
}

fn find_python() -> anyhow::Result<PathBuf> {
    if let Some(python) = std::env::var_os("WEBHOOK_RECEIVER_PYTHON") {
        return check_imports(PathBuf::from(python));
    }
    let beside_nats = std::env::var_os("NATS_SERVER_BIN")
        .map(PathBuf::from)
        .and_then(|bin| bin.parent().map(|dir| dir.join("python")));
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.local/venv/bin/python");
    let candidate = beside_nats.filter(|python| python.exists()).unwrap_or(venv);
    check_imports(candidate)
}

fn check_imports(python: PathBuf) -> anyhow::Result<PathBuf> {
    let output = Command::new(&python)
        .args(["-c", "from standardwebhooks.webhooks import Webhook"])
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run `{}`: {INSTALL_HINT}", python.display()))?;
    if !output.status.success() {
        bail!(
            "`{}` cannot import standardwebhooks ({}): {INSTALL_HINT}",
            python.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(python)
}

#[cfg(test)]
#[path = "webhook_receiver_tests.rs"]
mod tests;
