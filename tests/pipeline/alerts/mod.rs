//! Alerts and signed webhooks, through the real API like an operator: the admin API
//! adds a destination and a rule, a plugin writes a punishment through ingest, and the
//! notifier running in the stack delivers it to `tests/webhooks/receiver.py`, which checks
//! every signature with the `standardwebhooks` package from PyPI (not with our code).

mod delivery;
mod docs_examples;
mod documented;
mod faults;
mod page_rules;
mod ssrf;

use pipeline_tests::{TestAccount, TestStack, WAIT, eventually};
use reqwest::Method;
use serde_json::{Value, json};
use shared::config::Vars;
use test_support::WebhookReceiver;

/// The key that seals webhook secrets at rest in these tests (at least 32 characters).
const SECRETS_KEY: &str = "alerts-test-sealing-key-0123456789abcdef";
const SERVER: &str = "a1e70000-0000-4000-8000-000000000001";
const PLAYER: &str = "a1e70000-0000-4000-8000-0000000000aa";
const STAFF: &str = "a1e70000-0000-4000-8000-0000000000bb";

/// A stack whose webhooks may reach loopback (the receiver), an account on it, and a running
/// receiver.
pub(crate) struct AlertRig {
    pub(crate) stack: TestStack,
    pub(crate) account: TestAccount,
    pub(crate) receiver: WebhookReceiver,
}

/// The settings every alert test shares: a sealing key, and short waits so a test takes
/// seconds, not the production schedule's minutes.
fn alert_vars(vars: Vars) -> Vars {
    vars.set("WEBHOOK_SECRETS_KEY", SECRETS_KEY)
        .set("NOTIFIER_RETRY_BASE_MS", 200)
        .set("NOTIFIER_RETRY_MAX_MS", 1_000)
        .set("NOTIFIER_BATCH_WAIT_MS", 5)
}

impl AlertRig {
    /// A stack allowing loopback webhooks, with `configure` applied last.
    pub(crate) async fn start(configure: impl FnOnce(Vars) -> Vars) -> anyhow::Result<AlertRig> {
        let receiver = WebhookReceiver::start().await?;
        let stack = TestStack::start_with(|vars| {
            configure(alert_vars(vars).set("WEBHOOK_ALLOW_NETWORKS", "loopback"))
        })
        .await?;
        let account = stack.create_account("Alerts Network").await?;
        Ok(AlertRig {
            stack,
            account,
            receiver,
        })
    }

    /// `METHOD /api/admin/accounts/{account}{path}` with the admin key.
    pub(crate) async fn admin(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let path = format!("/api/admin/accounts/{}{path}", self.account.id);
        self.stack
            .call(method, &path, &self.stack.admin_key, body)
            .await
    }

    /// Adds a webhook destination to the receiver and tells the receiver its secret; returns
    /// the destination's id and secret.
    pub(crate) async fn webhook_destination(&mut self) -> anyhow::Result<(String, String)> {
        let url = self.receiver.url();
        let (status, created) = self
            .admin(
                Method::POST,
                "/destinations",
                Some(json!({"kind": "webhook", "url": url, "name": "Test receiver"})),
            )
            .await;
        anyhow::ensure!(status == 201, "create destination: {status} {created}");
        let id = created["id"].as_str().unwrap_or_default().to_owned();
        let secret = created["secret"].as_str().unwrap_or_default().to_owned();
        anyhow::ensure!(secret.starts_with("whsec_"), "no secret: {created}");
        self.receiver.set_secrets(&[&secret]).await?;
        Ok((id, secret))
    }

    /// Adds a `punishment_issued` rule for `types` (all when empty) sending to `destination`.
    pub(crate) async fn punishment_rule(
        &self,
        destination: &str,
        types: &[&str],
    ) -> anyhow::Result<String> {
        let (status, rule) = self
            .admin(
                Method::POST,
                "/alert-rules",
                Some(json!({"kind": "punishment_issued", "name": "Punishments",
                            "destinations": [destination], "punishment_types": types})),
            )
            .await;
        anyhow::ensure!(status == 201, "create rule: {status} {rule}");
        Ok(rule["id"].as_str().unwrap_or_default().to_owned())
    }

    /// Posts punishment records through ingest, as a plugin does.
    pub(crate) async fn post_punishments(&self, records: Value) -> anyhow::Result<()> {
        let (status, body) = self
            .stack
            .call(
                Method::POST,
                "/api/plugin/punishments",
                &self.account.plugin_key,
                Some(records),
            )
            .await;
        anyhow::ensure!(status == 202, "post punishments: {status} {body}");
        Ok(())
    }

    /// Waits until the notifier's evaluator has gone past everything in the log so far: from
    /// then on the outbox holds every notification of what was written before.
    pub(crate) async fn evaluated(&self) -> anyhow::Result<()> {
        let client = async_nats::connect(self.stack.nats.url()).await?;
        let stream_name = &self.stack.event_log.stream;
        let mut stream = async_nats::jetstream::new(client)
            .get_stream(stream_name)
            .await?;
        let last = i64::try_from(stream.info().await?.state.last_sequence)?;
        let pool = &self.stack.db.pool;
        let done = eventually(WAIT, || async {
            let at: Option<i64> = sqlx::query_scalar(
                "SELECT last_sequence FROM notifier_checkpoints WHERE stream = $1",
            )
            .bind(stream_name)
            .fetch_optional(pool)
            .await
            .ok()
            .flatten();
            at.filter(|at| *at >= last)
        })
        .await;
        anyhow::ensure!(
            done.is_some(),
            "the notifier did not evaluate up to sequence {last} within {WAIT:?}"
        );
        Ok(())
    }

    /// The delivery log of `destination` (newest first).
    pub(crate) async fn deliveries(&self, destination: &str) -> anyhow::Result<Vec<Value>> {
        let path = format!("/destinations/{destination}/deliveries?limit=100");
        let (status, body) = self.admin(Method::GET, &path, None).await;
        anyhow::ensure!(status == 200, "delivery log: {status} {body}");
        Ok(body["deliveries"].as_array().cloned().unwrap_or_default())
    }

    /// Polls the delivery log until `done` holds for it (at most [`WAIT`]).
    pub(crate) async fn wait_deliveries(
        &self,
        destination: &str,
        what: &str,
        done: impl Fn(&[Value]) -> bool,
    ) -> anyhow::Result<Vec<Value>> {
        let found = eventually(WAIT, || async {
            let log = self.deliveries(destination).await.ok()?;
            done(&log).then_some(log)
        })
        .await;
        match found {
            Some(log) => Ok(log),
            None => anyhow::bail!(
                "the delivery log did not show {what} within {WAIT:?}: {:#}",
                json!(self.deliveries(destination).await?)
            ),
        }
    }
}

/// A punishment record (issue) with the fixed server, player and staff.
pub(crate) fn punishment(kind: &str, reason: &str, external_id: &str) -> Value {
    json!({"server_id": SERVER, "player_uuid": PLAYER, "player_name": "Griefer", "type": kind,
           "reason": reason, "staff_uuid": STAFF, "staff_name": "ModMike",
           "issued_at": chrono::Utc::now().to_rfc3339(), "scope": "global",
           "source_plugin": "litebans", "external_id": external_id})
}

/// `msg_` + the delivery id's simple form: the `webhook-id` the design promises.
pub(crate) fn webhook_id_of(delivery_id: &str) -> String {
    format!("msg_{}", delivery_id.replace('-', ""))
}
