use crate::slow_link::SlowLink;
use async_nats::jetstream::{self, kv};
use ingest::{App, Config};
use serde_json::Value;
use shared::envelope::LogMessage;
use shared::event_log::EventLogConfig;
use shared::keys::{KeyEntry, KeyKind, generate_secret, hash_secret};
use shared::privacy::{Keyring, PrivacyConfig};
use shared::serve::ServeLimits;
use std::time::Duration;
use test_support::{CuttableProxy, NatsServer, private_event_log, test_vars};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

pub const SERVER: &str = "7d6b4c0e-1d1f-4f7e-9a53-8c1f3f3c2a10";
pub const PLAYER: &str = "069a79f4-44e9-4726-a5be-fca90e38aaf5";

/// A running ingest on a private nats-server, with one plugin and one dashboard key.
pub struct TestIngest {
    pub base: String,
    pub nats: NatsServer,
    /// What ingest's NATS connection goes through, when started with [`Self::start_behind_proxy`].
    pub proxy: Option<CuttableProxy>,
    /// What ingest's NATS connection goes through, when started with [`Self::start_with_ack_delay`].
    #[allow(dead_code)] // Held only to keep the relay up; the cluster binary's tests use it.
    pub slow_link: Option<SlowLink>,
    pub log: EventLogConfig,
    /// Ingest's privacy settings (its master key), to open what it sealed.
    pub privacy: PrivacyConfig,
    pub account_id: Uuid,
    pub plugin_key: String,
    pub dashboard_key: String,
    pub admin_key: String,
    pub http: reqwest::Client,
    pub shutdown: CancellationToken,
}

/// Ingest's settings for a test: the common test variables, `log` and `admin_key`, through
/// ingest's own loader.
pub fn config(nats_url: String, log: EventLogConfig, admin_key: &str) -> Config {
    let vars = test_vars(&nats_url)
        .with_event_log(&log)
        .set("ADMIN_KEY", admin_key);
    Config::from_vars(&vars).expect("the test settings load")
}

impl TestIngest {
    pub async fn start() -> TestIngest {
        Self::start_with(ServeLimits::default()).await
    }

    /// Like [`Self::start`], serving under `limits`.
    pub async fn start_with(limits: ServeLimits) -> TestIngest {
        Self::start_configured(|config| config.common.serve = limits).await
    }

    /// Like [`Self::start`], with `configure` applied to the configuration.
    pub async fn start_configured(configure: impl FnOnce(&mut Config)) -> TestIngest {
        Self::start_inner(configure, Link::Direct).await
    }

    /// Like [`Self::start`], with ingest's NATS connection (only ingest's: the test's own
    /// connections go straight to the server) through a proxy the test can cut.
    pub async fn start_behind_proxy() -> TestIngest {
        Self::start_inner(|_| {}, Link::Proxy).await
    }

    /// Like [`Self::start_configured`], with everything the server sends to ingest (acks
    /// included) held back for `delay`, as from a slow disk.
    #[allow(dead_code)] // Used by the cluster binary's coalescing tests.
    pub async fn start_with_ack_delay(
        delay: Duration,
        configure: impl FnOnce(&mut Config),
    ) -> TestIngest {
        Self::start_inner(configure, Link::Slow(delay)).await
    }

    async fn start_inner(configure: impl FnOnce(&mut Config), link: Link) -> TestIngest {
        shared::telemetry::init_test_tracing();
        let nats = NatsServer::start().await.expect("nats-server starts");
        let proxy = match link {
            Link::Proxy => Some(
                CuttableProxy::start(&nats.url())
                    .await
                    .expect("proxy starts"),
            ),
            _ => None,
        };
        let slow_link = match link {
            Link::Slow(delay) => Some(
                SlowLink::start(&nats.url(), delay)
                    .await
                    .expect("slow link starts"),
            ),
            _ => None,
        };
        let log = private_event_log();
        let admin_key = generate_secret(KeyKind::Admin);
        let shutdown = CancellationToken::new();
        let nats_url = match (&proxy, &slow_link) {
            (Some(proxy), _) => proxy.nats_url(),
            (_, Some(link)) => link.nats_url(),
            _ => nats.url(),
        };
        let mut config = config(nats_url, log.clone(), &admin_key);
        configure(&mut config);
        let privacy = config.privacy.clone();
        let app = App::build(config, shutdown.clone())
            .await
            .expect("ingest builds");
        let base = format!("http://{}", app.local_addr());
        tokio::spawn(app.run_until_stopped(shutdown.clone()));
        let mut ingest = TestIngest {
            base,
            nats,
            proxy,
            slow_link,
            log,
            privacy,
            account_id: Uuid::now_v7(),
            plugin_key: String::new(),
            dashboard_key: String::new(),
            admin_key,
            http: reqwest::Client::new(),
            shutdown,
        };
        ingest.plugin_key = ingest.add_key(ingest.account_id, KeyKind::Plugin).await;
        ingest.dashboard_key = ingest.add_key(ingest.account_id, KeyKind::Dashboard).await;
        ingest.wait_until_accepts(&ingest.plugin_key.clone()).await;
        ingest
    }

    pub async fn bucket(&self) -> kv::Store {
        let client = async_nats::connect(self.nats.url()).await.expect("connect");
        jetstream::new(client)
            .get_key_value(&self.log.key_bucket)
            .await
            .expect("bucket")
    }

    /// Puts a key straight into the key bucket (what the admin API does after PostgreSQL).
    pub async fn add_key(&self, account_id: Uuid, kind: KeyKind) -> String {
        let secret = generate_secret(kind);
        let entry = KeyEntry {
            key_id: Uuid::now_v7(),
            account_id,
            kind,
            expires_at: None,
        };
        self.bucket()
            .await
            .put(
                hash_secret(&secret),
                serde_json::to_vec(&entry).expect("json").into(),
            )
            .await
            .expect("put key");
        secret
    }

    /// Polls until `key` is accepted (the key directory is fed by a watch).
    pub async fn wait_until_accepts(&self, key: &str) {
        // Generous: the whole suite runs at once on a small, busy machine.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        loop {
            let status = self
                .post_raw(
                    "/api/plugin/heartbeat",
                    key,
                    "application/json",
                    "{}".into(),
                )
                .await
                .status();
            if status != 401 && status != 503 {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "key never accepted (last status {status})"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Polls until ingest knows its connection to NATS is down (its readiness says so): from
    /// then on a write is refused without being sent. Before, a write may go into the
    /// client's buffer, time out, and still be delivered when NATS is back.
    pub async fn wait_until_log_down(&self) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        loop {
            let ready: Option<Value> =
                match self.http.get(format!("{}/readyz", self.base)).send().await {
                    Ok(answer) => answer.json().await.ok(),
                    Err(_) => None,
                };
            if ready.is_some_and(|r| r["checks"]["ingest_nats"]["ok"] == Value::Bool(false)) {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "ingest never saw NATS go down"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    pub async fn post_raw(
        &self,
        path: &str,
        key: &str,
        content_type: &str,
        body: Vec<u8>,
    ) -> reqwest::Response {
        self.http
            .post(format!("{}{path}", self.base))
            .bearer_auth(key)
            .header("content-type", content_type)
            .body(body)
            .send()
            .await
            .expect("request sent")
    }

    pub async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        let response = self
            .post_raw(
                path,
                &self.plugin_key,
                "application/json",
                body.to_string().into_bytes(),
            )
            .await;
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// Every log message in the stream, with its subject, in order.
    pub async fn log_messages(&self) -> Vec<(String, Vec<u8>)> {
        let client = async_nats::connect(self.nats.url()).await.expect("connect");
        let js = jetstream::new(client);
        let mut stream = js.get_stream(&self.log.stream).await.expect("stream");
        let last = stream.info().await.expect("info").state.last_sequence;
        let mut out = Vec::new();
        for seq in 1..=last {
            let message = stream.get_raw_message(seq).await.expect("message");
            out.push((message.subject.to_string(), message.payload.to_vec()));
        }
        out
    }

    /// Every log message decoded, its personal fields still sealed as they stand in the log.
    pub async fn sealed_log(&self) -> Vec<(String, LogMessage)> {
        self.log_messages()
            .await
            .into_iter()
            .map(|(subject, bytes)| (subject, LogMessage::decode(&bytes).expect("decodes")))
            .collect()
    }

    /// Every log message decoded and opened with ingest's keys, as every reader sees it.
    pub async fn decoded_log(&self) -> Vec<(String, LogMessage)> {
        let (subjects, mut messages): (Vec<String>, Vec<LogMessage>) =
            self.sealed_log().await.into_iter().unzip();
        self.keyring()
            .await
            .open(&mut messages)
            .await
            .expect("the keys open");
        subjects.into_iter().zip(messages).collect()
    }

    /// A keyring over ingest's privacy buckets, with its master key.
    pub async fn keyring(&self) -> Keyring {
        let client = async_nats::connect(self.nats.url()).await.expect("connect");
        self.privacy
            .keyring(&jetstream::new(client), &self.log)
            .await
            .expect("the privacy buckets open")
    }
}

/// How ingest reaches its nats-server.
#[derive(Clone, Copy)]
enum Link {
    Direct,
    Proxy,
    #[allow(dead_code)] // Used by the cluster binary's coalescing tests.
    Slow(Duration),
}

impl Drop for TestIngest {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}
