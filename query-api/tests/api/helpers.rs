//! Spawning the app and talking to it.

use query_api::{App, Config};
use reqwest::{Response, StatusCode};
use serde_json::{Value, json};
use shared::telemetry::init_test_tracing;
use std::future::Future;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use test_support::{CuttableProxy, NatsServer, TestDb, test_vars};
use tokio_util::sync::CancellationToken;

/// How long the harness waits for an app to be ready and a new key to work: generous, since the
/// whole suite runs at once on a small, busy machine and a wait ends once its condition holds.
pub(crate) const WAIT: Duration = Duration::from_secs(60);

/// One running app with its own NATS and database; everything stops on drop.
pub(crate) struct TestApp {
    pub(crate) addr: SocketAddr,
    pub(crate) admin_key: String,
    pub(crate) client: reqwest::Client,
    pub(crate) config: Config,
    pub(crate) db: TestDb,
    /// The NATS server's own URL (the app's goes through `proxy` when there is one).
    pub(crate) nats_url: String,
    /// What the app's NATS connection goes through, when spawned with
    /// [`TestApp::spawn_behind_proxy`].
    pub(crate) proxy: Option<CuttableProxy>,
    /// Kept so the server lives as long as the app.
    _nats: NatsServer,
    shutdown: CancellationToken,
}

impl Drop for TestApp {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// A running instance sharing another's NATS and database.
pub(crate) struct Instance {
    pub(crate) addr: SocketAddr,
    shutdown: CancellationToken,
}

impl Drop for Instance {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// Starts an app on `config` and waits until `/readyz` says ready.
pub(crate) async fn start(
    config: Config,
    client: &reqwest::Client,
) -> anyhow::Result<(SocketAddr, CancellationToken)> {
    let shutdown = CancellationToken::new();
    let app = App::build(config, shutdown.clone()).await?;
    let addr = app.local_addr();
    tokio::spawn(app.run_until_stopped(shutdown.clone()));
    let ready = eventually(WAIT, || async {
        client
            .get(format!("http://{addr}/readyz"))
            .send()
            .await
            .is_ok_and(|r| r.status() == StatusCode::OK)
    })
    .await;
    anyhow::ensure!(ready, "the app did not become ready");
    Ok((addr, shutdown))
}

impl TestApp {
    /// NATS, a migrated database, and the app on 127.0.0.1:0.
    pub(crate) async fn spawn() -> anyhow::Result<TestApp> {
        Self::spawn_inner(false, |vars| vars).await
    }

    /// Like [`Self::spawn`], with `adjust` applied to the app's settings.
    pub(crate) async fn spawn_with(
        adjust: impl FnOnce(shared::config::Vars) -> shared::config::Vars,
    ) -> anyhow::Result<TestApp> {
        Self::spawn_inner(false, adjust).await
    }

    /// Like [`Self::spawn`], with the app's NATS connection (only the app's) through a proxy
    /// the test can cut.
    pub(crate) async fn spawn_behind_proxy() -> anyhow::Result<TestApp> {
        Self::spawn_inner(true, |vars| vars).await
    }

    async fn spawn_inner(
        behind_proxy: bool,
        adjust: impl FnOnce(shared::config::Vars) -> shared::config::Vars,
    ) -> anyhow::Result<TestApp> {
        init_test_tracing();
        let nats = NatsServer::start().await?;
        let proxy = if behind_proxy {
            Some(CuttableProxy::start(&nats.url()).await?)
        } else {
            None
        };
        let db = TestDb::create().await?;
        sqlx::migrate!("../projector/migrations")
            .run(&db.pool)
            .await?;
        let nats_url = proxy
            .as_ref()
            .map_or_else(|| nats.url(), CuttableProxy::nats_url);
        let vars = adjust(test_vars(&nats_url).set("DATABASE_URL", &db.url));
        let config = Config::from_vars(&vars)?;
        let admin_key = config.admin_key.expose().clone();
        let client = reqwest::Client::new();
        let (addr, shutdown) = start(config.clone(), &client).await?;
        Ok(TestApp {
            addr,
            admin_key,
            client,
            config,
            db,
            nats_url: nats.url(),
            proxy,
            _nats: nats,
            shutdown,
        })
    }

    /// Another instance on the same NATS and database.
    pub(crate) async fn second_instance(&self) -> anyhow::Result<Instance> {
        let (addr, shutdown) = start(self.config.clone(), &self.client).await?;
        Ok(Instance { addr, shutdown })
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// A request with the admin key.
    pub(crate) fn admin(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.client
            .request(method, self.url(path))
            .bearer_auth(&self.admin_key)
    }

    /// `GET path` with `key` (no header when `None`).
    pub(crate) async fn get_with(&self, path: &str, key: Option<&str>) -> anyhow::Result<Response> {
        get_at(&self.client, self.addr, path, key).await
    }

    /// Creates an account and returns its id.
    pub(crate) async fn create_account(&self, name: &str) -> anyhow::Result<String> {
        let response = self
            .admin(reqwest::Method::POST, "/api/admin/accounts")
            .json(&json!({ "name": name }))
            .send()
            .await?;
        anyhow::ensure!(
            response.status() == StatusCode::CREATED,
            "{}",
            response.status()
        );
        let body: Value = response.json().await?;
        Ok(text(&body["id"]))
    }

    /// Issues a key and returns the whole response body (`id`, `key`, ...).
    pub(crate) async fn create_key(&self, account: &str, kind: &str) -> anyhow::Result<Value> {
        let response = self
            .admin(
                reqwest::Method::POST,
                &format!("/api/admin/accounts/{account}/keys"),
            )
            .json(&json!({ "kind": kind, "label": "test" }))
            .send()
            .await?;
        anyhow::ensure!(
            response.status() == StatusCode::CREATED,
            "{}",
            response.status()
        );
        Ok(response.json().await?)
    }

    /// An account with a dashboard key that already works: `(account_id, key body)`.
    pub(crate) async fn account_with_dashboard_key(&self) -> anyhow::Result<(String, Value)> {
        let account = self.create_account("Network").await?;
        let key = self.create_key(&account, "dashboard").await?;
        let secret = text(&key["key"]);
        let works = self
            .status_becomes("/api/v1/events", &secret, StatusCode::OK, WAIT)
            .await?;
        anyhow::ensure!(works, "a new dashboard key never started working");
        Ok((account, key))
    }

    /// Polls `GET path` with `key` until it answers `status` (true) or the deadline passes.
    pub(crate) async fn status_becomes(
        &self,
        path: &str,
        key: &str,
        status: StatusCode,
        within: Duration,
    ) -> anyhow::Result<bool> {
        Ok(status_becomes_at(&self.client, self.addr, path, key, status, within).await)
    }
}

pub(crate) async fn get_at(
    client: &reqwest::Client,
    addr: SocketAddr,
    path: &str,
    key: Option<&str>,
) -> anyhow::Result<Response> {
    let mut request = client.get(format!("http://{addr}{path}"));
    if let Some(key) = key {
        request = request.bearer_auth(key);
    }
    Ok(request.send().await?)
}

pub(crate) async fn status_becomes_at(
    client: &reqwest::Client,
    addr: SocketAddr,
    path: &str,
    key: &str,
    status: StatusCode,
    within: Duration,
) -> bool {
    eventually(within, || async {
        get_at(client, addr, path, Some(key))
            .await
            .is_ok_and(|r| r.status() == status)
    })
    .await
}

/// Polls `check` every 20 ms until it is true (true) or `within` passes (false).
pub(crate) async fn eventually<F, Fut>(within: Duration, mut check: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = Instant::now() + within;
    loop {
        if check().await {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A JSON string's text ("" when it is not a string).
pub(crate) fn text(value: &Value) -> String {
    value.as_str().unwrap_or_default().to_owned()
}

/// Asserts a problem-details response and returns its body.
pub(crate) async fn problem(
    response: Response,
    status: StatusCode,
    code: &str,
) -> anyhow::Result<Value> {
    assert_eq!(response.status(), status);
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    assert_eq!(content_type, "application/problem+json");
    let body: Value = response.json().await?;
    assert_eq!(body["status"], status.as_u16());
    assert_eq!(body["code"], code, "{body}");
    assert!(
        body["type"]
            .as_str()
            .is_some_and(|t| t.starts_with("https://"))
    );
    Ok(body)
}

/// The `field`s of a problem's `errors`.
pub(crate) fn error_fields(problem: &Value) -> Vec<String> {
    problem["errors"]
        .as_array()
        .map(|errors| errors.iter().map(|e| text(&e["field"])).collect())
        .unwrap_or_default()
}
