//! A database with an account, destinations and deliveries written straight into it, and the
//! delivery workers run against it.

use super::receiver::Receiver;
use crate::harness::eventually;
use projector::alerts::delivery::{self, DeliveryConfig};
use shared::alerts::{AlertsConfig, NetworkPolicy, SealingKey, signing};
use shared::config::Vars;
use sqlx::PgPool;
use std::time::Duration;
use test_support::TestDb;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

const SEALING_KEY: &str = "delivery-tests-sealing-key-0123456789abcdef";

/// A fresh database holding one account, and a receiver.
pub(crate) struct Fixture {
    pub(crate) db: TestDb,
    pub(crate) account: Uuid,
    pub(crate) receiver: Receiver,
    key: SealingKey,
}

/// Delivery workers running in a task.
pub(crate) struct Workers {
    shutdown: CancellationToken,
    task: JoinHandle<anyhow::Result<()>>,
}

impl Workers {
    /// Stops them as the process would on SIGTERM, and waits.
    pub(crate) async fn stop(self) -> anyhow::Result<()> {
        self.shutdown.cancel();
        tokio::time::timeout(Duration::from_secs(15), self.task).await???;
        Ok(())
    }

    /// Stops them as kill -9 would: the task is dropped mid-flight, nothing is recorded.
    pub(crate) async fn kill(self) {
        self.task.abort();
        let _ = self.task.await;
    }
}

/// Settings that retry quickly: 100 ms base, 400 ms cap, 1 s timeout, 200 ms poll.
pub(crate) fn fast_config() -> anyhow::Result<DeliveryConfig> {
    let mut config = DeliveryConfig::from_vars(
        &Vars::empty()
            .set("NOTIFIER_WORKERS", 4)
            .set("NOTIFIER_CONNECT_TIMEOUT_MS", 1000)
            .set("NOTIFIER_TIMEOUT_MS", 1000)
            .set("NOTIFIER_RETRY_BASE_MS", 100)
            .set("NOTIFIER_RETRY_MAX_MS", 400),
    )?;
    config.poll_interval = Duration::from_millis(200);
    Ok(config)
}

/// The loopback-allowing policy the tests' receivers need, or the default strict one.
pub(crate) fn policy(allow_loopback: bool) -> NetworkPolicy {
    if allow_loopback {
        NetworkPolicy::allow_loopback()
    } else {
        NetworkPolicy::default()
    }
}

impl Fixture {
    pub(crate) async fn new() -> anyhow::Result<Fixture> {
        shared::telemetry::init_test_tracing();
        let db = TestDb::create().await?;
        projector::MIGRATOR.run(&db.pool).await?;
        let account = Uuid::now_v7();
        sqlx::query("INSERT INTO accounts (id, name) VALUES ($1, 'delivery tests')")
            .bind(account)
            .execute(&db.pool)
            .await?;
        Ok(Fixture {
            db,
            account,
            receiver: Receiver::start().await?,
            key: SealingKey::new(SEALING_KEY)?,
        })
    }

    pub(crate) fn pool(&self) -> &PgPool {
        &self.db.pool
    }

    /// Runs the workers with `config` under `networks`.
    pub(crate) fn start(&self, config: DeliveryConfig, networks: NetworkPolicy) -> Workers {
        let shutdown = CancellationToken::new();
        let alerts = AlertsConfig {
            sealing_key: Some(self.key.clone()),
            networks,
        };
        let task = tokio::spawn(delivery::run(
            self.pool().clone(),
            config,
            alerts,
            shutdown.clone(),
        ));
        Workers { shutdown, task }
    }

    /// A webhook destination at `url` with a fresh signing secret; returns its id and secret.
    pub(crate) async fn webhook(&self, url: &str) -> anyhow::Result<(Uuid, String)> {
        let id = Uuid::now_v7();
        let secret = signing::generate_secret();
        sqlx::query(
            "INSERT INTO alert_destinations (id, account_id, kind, name, url, secret_sealed)
             VALUES ($1, $2, 'webhook', 'receiver', $3, $4)",
        )
        .bind(id)
        .bind(self.account)
        .bind(url)
        .bind(self.key.seal(id.as_bytes(), &secret))
        .execute(self.pool())
        .await?;
        Ok((id, secret))
    }

    /// Gives `destination` a previous secret (as a rotation would) that expires in `valid_for`
    /// seconds (negative: already expired); returns it.
    pub(crate) async fn previous_secret(
        &self,
        destination: Uuid,
        valid_for: i64,
    ) -> anyhow::Result<String> {
        let secret = signing::generate_secret();
        sqlx::query(
            "UPDATE alert_destinations
                SET previous_secret_sealed = $2,
                    previous_secret_expires_at = now() + make_interval(secs => $3)
              WHERE id = $1",
        )
        .bind(destination)
        .bind(self.key.seal(destination.as_bytes(), &secret))
        .bind(valid_for as f64)
        .execute(self.pool())
        .await?;
        Ok(secret)
    }

    /// A pending `test` delivery to `destination`, due now, and the NOTIFY its writers send.
    pub(crate) async fn delivery(&self, destination: Uuid) -> anyhow::Result<Uuid> {
        let id = Uuid::now_v7();
        let payload = serde_json::json!({
            "rule_id": null,
            "rule_name": null,
            "account_id": self.account,
            "destination_id": destination,
            "message": "A test event from Warden",
        });
        sqlx::query(
            "INSERT INTO alert_deliveries
                 (id, account_id, destination_id, event_type, payload, occurred_at)
             VALUES ($1, $2, $3, 'test', $4, now())",
        )
        .bind(id)
        .bind(self.account)
        .bind(destination)
        .bind(payload)
        .execute(self.pool())
        .await?;
        sqlx::query("SELECT pg_notify('alert_deliveries', '')")
            .execute(self.pool())
            .await?;
        Ok(id)
    }

    /// The delivery's status and attempt count.
    pub(crate) async fn standing(&self, delivery: Uuid) -> anyhow::Result<(String, i32)> {
        Ok(
            sqlx::query_as("SELECT status, attempts FROM alert_deliveries WHERE id = $1")
                .bind(delivery)
                .fetch_one(self.pool())
                .await?,
        )
    }

    /// Waits until the delivery has status `status`; returns its attempt count.
    pub(crate) async fn until_status(&self, delivery: Uuid, status: &str) -> anyhow::Result<i32> {
        eventually(
            &format!("delivery {delivery} to be {status}"),
            || async move {
                let (now, attempts) = self.standing(delivery).await?;
                Ok((now == status).then_some(attempts))
            },
        )
        .await
    }

    /// Waits until `n` attempts of the delivery are recorded.
    pub(crate) async fn until_recorded(&self, delivery: Uuid, n: i64) -> anyhow::Result<()> {
        eventually(
            &format!("{n} recorded attempts of {delivery}"),
            || async move {
                let recorded: i64 = sqlx::query_scalar(
                    "SELECT count(*) FROM alert_delivery_attempts WHERE delivery_id = $1",
                )
                .bind(delivery)
                .fetch_one(self.pool())
                .await?;
                Ok((recorded >= n).then_some(()))
            },
        )
        .await
    }

    /// Waits until `destination` is disabled; returns its `disabled_reason` and whether
    /// `disabled_at` is set.
    pub(crate) async fn until_disabled(&self, destination: Uuid) -> anyhow::Result<(String, bool)> {
        eventually("the destination to be disabled", || async move {
            let row: (bool, Option<String>, bool) = sqlx::query_as(
                "SELECT enabled, disabled_reason, disabled_at IS NOT NULL
                   FROM alert_destinations WHERE id = $1",
            )
            .bind(destination)
            .fetch_one(self.pool())
            .await?;
            Ok((!row.0).then_some((row.1.unwrap_or_default(), row.2)))
        })
        .await
    }

    /// The attempt log of a delivery, oldest first.
    pub(crate) async fn attempts(&self, delivery: Uuid) -> anyhow::Result<Vec<Attempt>> {
        Ok(sqlx::query_as(
            "SELECT attempt, status_code, duration_ms, error FROM alert_delivery_attempts
              WHERE delivery_id = $1 ORDER BY attempt",
        )
        .bind(delivery)
        .fetch_all(self.pool())
        .await?)
    }
}

/// One row of `alert_delivery_attempts`.
#[derive(Debug, sqlx::FromRow)]
pub(crate) struct Attempt {
    pub(crate) attempt: i32,
    pub(crate) status_code: Option<i32>,
    pub(crate) duration_ms: i32,
    pub(crate) error: Option<String>,
}

/// Checks a received `webhook-signature` header: every `v1,` entry must verify against one of
/// `secrets` (and each secret must have signed), as a Standard Webhooks receiver would.
pub(crate) fn assert_signed(
    received: &super::receiver::Received,
    secrets: &[&str],
) -> anyhow::Result<()> {
    let id = received.header("webhook-id");
    let timestamp: i64 = received.header("webhook-timestamp").parse()?;
    let header = received.header("webhook-signature");
    let sent: Vec<&str> = header.split(' ').collect();
    assert_eq!(sent.len(), secrets.len(), "signatures: {header}");
    for secret in secrets {
        let expected = signing::sign(secret, id, timestamp, &received.body)?;
        assert!(
            sent.contains(&expected.as_str()),
            "{expected} not in {header}"
        );
    }
    Ok(())
}
