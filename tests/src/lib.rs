//! Harness for whole-pipeline tests: the all-in-one stack on a private nats-server and its own
//! PostgreSQL database, driven over HTTP like a real plugin and dashboard would.

pub mod sse;

use serde_json::{Value, json};
use shared::event_log::EventLogConfig;
use stack::{Stack, StackConfig};
use std::time::Duration;
use test_support::{NatsServer, TestDb, private_event_log, test_vars};
use tokio_util::sync::CancellationToken;

/// How long the harness waits for the stack to be ready, for the projector to catch up and for
/// new keys to work: generous, since the whole suite runs at once on a small, busy machine and
/// a wait ends as soon as its condition holds.
pub const WAIT: Duration = Duration::from_secs(60);

/// A running stack and an HTTP client for it.
pub struct TestStack {
    /// Base URL, e.g. `http://127.0.0.1:41234`.
    pub base: String,
    /// The operator's admin key.
    pub admin_key: String,
    /// The private nats-server (kill/restart it for fault tests).
    pub nats: NatsServer,
    /// The test's own database.
    pub db: TestDb,
    /// HTTP client.
    pub http: reqwest::Client,
    /// The stack's event log (stream and bucket names).
    pub event_log: EventLogConfig,
    /// The settings the stack started with: another process of the same deployment (a
    /// `projector rebuild`, a second service) loads its config from these, so it shares the
    /// stack's log, database and `PRIVACY_MASTER_KEY` (a new master key opens nothing sealed).
    pub vars: shared::config::Vars,
    shutdown: CancellationToken,
}

/// An account with one plugin and one dashboard key.
#[derive(Debug, Clone)]
pub struct TestAccount {
    /// Its id.
    pub id: String,
    /// Its plugin key.
    pub plugin_key: String,
    /// Its dashboard key.
    pub dashboard_key: String,
}

impl TestStack {
    /// Starts a stack with its own stream, key bucket and database.
    pub async fn start() -> anyhow::Result<TestStack> {
        TestStack::start_with(|vars| vars).await
    }

    /// Like [`TestStack::start`], with the settings changed by `configure` first (the alert
    /// tests set the notifier's timeouts and which networks webhooks may reach).
    pub async fn start_with(
        configure: impl FnOnce(shared::config::Vars) -> shared::config::Vars,
    ) -> anyhow::Result<TestStack> {
        let nats = NatsServer::start().await?;
        let db = TestDb::create().await?;
        TestStack::start_on(nats, db, private_event_log(), configure).await
    }

    /// Like [`TestStack::start_with`], on a nats-server, database and event log the test
    /// prepared (a stream made the way an older version made it, say).
    pub async fn start_on(
        nats: NatsServer,
        db: TestDb,
        event_log: EventLogConfig,
        configure: impl FnOnce(shared::config::Vars) -> shared::config::Vars,
    ) -> anyhow::Result<TestStack> {
        shared::telemetry::init_test_tracing();
        let vars = configure(
            test_vars(&nats.url())
                .with_event_log(&event_log)
                .set("DATABASE_URL", &db.url),
        );
        let config = StackConfig::from_vars(&vars)?;
        let admin_key = config.query.admin_key.expose().clone();
        let shutdown = CancellationToken::new();
        let stack = Stack::build(config, shutdown.clone()).await?;
        let base = format!("http://{}", stack.local_addr());
        tokio::spawn(stack.run_until_stopped(shutdown.clone()));
        let test_stack = TestStack {
            base,
            admin_key,
            nats,
            db,
            http: reqwest::Client::new(),
            event_log,
            vars,
            shutdown,
        };
        test_stack.wait_ready().await?;
        Ok(test_stack)
    }

    async fn wait_ready(&self) -> anyhow::Result<()> {
        let url = format!("{}/readyz", self.base);
        eventually(WAIT, || async {
            let response = self.http.get(&url).send().await.ok()?;
            (response.status() == 200).then_some(())
        })
        .await
        .ok_or_else(|| anyhow::anyhow!("stack not ready within {WAIT:?}"))
    }

    /// Waits until every read model has applied everything in the log so far: after it, a
    /// read reflects every acknowledged write. Polls PostgreSQL and NATS, not the HTTP API, so
    /// it spends no rate-limit quota.
    pub async fn projected(&self) -> anyhow::Result<()> {
        let client = async_nats::connect(self.nats.url()).await?;
        let stream = async_nats::jetstream::new(client)
            .get_stream(&self.event_log.stream)
            .await?;
        // The test's configuration made the stream, so its partitions are the stream's.
        let subjects = self.event_log.subjects();
        test_support::wait_caught_up(&self.db.pool, &stream, &subjects, WAIT).await
    }

    /// Sends a request with a key and a JSON body; returns the status and JSON body.
    pub async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        key: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(key);
        if let Some(body) = body {
            request = request.json(&body);
        }
        match request.send().await {
            Ok(response) => {
                let status = response.status().as_u16();
                (status, response.json().await.unwrap_or(Value::Null))
            }
            Err(error) => (0, json!({"transport_error": error.to_string()})),
        }
    }

    /// Creates an account and its two keys through the admin API.
    pub async fn create_account(&self, name: &str) -> anyhow::Result<TestAccount> {
        let (status, account) = self
            .call(
                reqwest::Method::POST,
                "/api/admin/accounts",
                &self.admin_key,
                Some(json!({"name": name})),
            )
            .await;
        anyhow::ensure!(status == 201, "create account: {status} {account}");
        let id = account["id"].as_str().unwrap_or_default().to_owned();
        self.keys_for(id).await
    }

    /// Issues a plugin and a dashboard key for the existing account `id` through the admin
    /// API, and waits until both services accept them.
    pub async fn keys_for(&self, id: String) -> anyhow::Result<TestAccount> {
        let mut keys = Vec::new();
        for kind in ["plugin", "dashboard"] {
            let path = format!("/api/admin/accounts/{id}/keys");
            let (status, key) = self
                .call(
                    reqwest::Method::POST,
                    &path,
                    &self.admin_key,
                    Some(json!({"kind": kind, "label": kind})),
                )
                .await;
            anyhow::ensure!(status == 201, "create {kind} key: {status} {key}");
            keys.push(key["key"].as_str().unwrap_or_default().to_owned());
        }
        let account = TestAccount {
            id,
            plugin_key: keys.remove(0),
            dashboard_key: keys.remove(0),
        };
        // Keys reach ingest through the key bucket's watch: wait until the plugin key works.
        let ready = eventually(WAIT, || async {
            let (status, _) = self
                .call(
                    reqwest::Method::POST,
                    "/api/plugin/heartbeat",
                    &account.plugin_key,
                    Some(json!({})),
                )
                .await;
            (status == 422).then_some(())
        })
        .await;
        anyhow::ensure!(ready.is_some(), "plugin key not accepted within {WAIT:?}");
        // And query-api's directory, through its own watch: until the dashboard key works.
        let ready = eventually(WAIT, || async {
            let (status, _) = self
                .call(
                    reqwest::Method::GET,
                    "/api/players?limit=1",
                    &account.dashboard_key,
                    None,
                )
                .await;
            (status == 200).then_some(())
        })
        .await;
        anyhow::ensure!(
            ready.is_some(),
            "dashboard key not accepted within {WAIT:?}"
        );
        Ok(account)
    }
}

/// The password of every team member [`TestStack::create_member`] makes.
pub const MEMBER_PASSWORD: &str = "correct horse battery staple";

impl TestStack {
    /// Creates a team member of `account_id` through the admin API (password
    /// [`MEMBER_PASSWORD`]), as `./deploy/up.sh` makes the demo owner.
    pub async fn create_member(
        &self,
        account_id: &str,
        login: &str,
        display_name: &str,
        role: &str,
    ) -> anyhow::Result<()> {
        let (status, body) = self
            .call(
                reqwest::Method::POST,
                &format!("/api/admin/accounts/{account_id}/members"),
                &self.admin_key,
                Some(
                    json!({"login": login, "display_name": display_name, "role": role,
                            "password": MEMBER_PASSWORD}),
                ),
            )
            .await;
        anyhow::ensure!(status == 201, "create member {login}: {status} {body}");
        Ok(())
    }

    /// Creates each `(login, display name, role)` member of `account_id`, all with
    /// `MEMBER_PASSWORD`.
    pub async fn create_members(
        &self,
        account_id: &str,
        members: &[(&str, &str, &str)],
    ) -> anyhow::Result<()> {
        for (login, display_name, role) in members {
            self.create_member(account_id, login, display_name, role)
                .await?;
        }
        Ok(())
    }
}

impl Drop for TestStack {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// Polls `check` every 20 ms until it returns `Some`, or `None` after `deadline`.
pub async fn eventually<T, F, Fut>(deadline: Duration, check: F) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    eventually_every(deadline, Duration::from_millis(20), check).await
}

/// Polls `check` every `interval` until it returns `Some`, or `None` after `deadline`.
pub async fn eventually_every<T, F, Fut>(
    deadline: Duration,
    interval: Duration,
    mut check: F,
) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let until = tokio::time::Instant::now() + deadline;
    loop {
        if let Some(value) = check().await {
            return Some(value);
        }
        if tokio::time::Instant::now() >= until {
            return None;
        }
        tokio::time::sleep(interval).await;
    }
}
