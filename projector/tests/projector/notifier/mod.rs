//! The notifier's evaluator against a real nats-server and PostgreSQL: an in-process notifier
//! beside the harness's projector, rules and destinations written as query-api writes them,
//! and the outbox (`alert_deliveries`) read back.

mod lifecycle;
mod proxy;
mod rules;
mod sealed;

use crate::harness::{Harness, eventually};
use projector::alerts::{Notifier, NotifierConfig};
use serde_json::Value;
use shared::alerts::SealingKey;
use shared::alerts::signing::generate_secret;
use sqlx::PgPool;
use std::time::Duration;
use test_support::test_vars;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

const SECRETS_KEY: &str = "notifier-evaluator-test-sealing-key-0123";

/// The harness's projector and stream, plus a notifier on them.
pub(crate) struct Notifying {
    pub(crate) h: Harness,
    config: NotifierConfig,
    running: Option<(CancellationToken, JoinHandle<anyhow::Result<()>>)>,
}

/// One outbox row as a test reads it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct Row {
    pub(crate) destination_id: Uuid,
    pub(crate) rule_id: Option<Uuid>,
    pub(crate) event_type: String,
    pub(crate) payload: Value,
    pub(crate) source_sequence: Option<i64>,
}

impl Notifying {
    /// Starts nats-server, a database, the projector and the notifier, and waits until the
    /// notifier has its first checkpoint (the end of the log).
    pub(crate) async fn start() -> anyhow::Result<Notifying> {
        let mut n = Notifying::prepare().await?;
        n.start_notifier().await?;
        Ok(n)
    }

    /// Like [`Notifying::start`] without starting the notifier.
    pub(crate) async fn prepare() -> anyhow::Result<Notifying> {
        let h = Harness::start().await?;
        let vars = test_vars(&h.nats.url())
            .with_event_log(&h.config.common.event_log)
            .set("DATABASE_URL", &h.db.url)
            .set("WEBHOOK_SECRETS_KEY", SECRETS_KEY)
            .set("NOTIFIER_BATCH_WAIT_MS", 5)
            .set("NOTIFIER_SWEEP_MS", 200)
            // The destinations point nowhere (`.invalid`); keep the workers' retries rare.
            .set("NOTIFIER_RETRY_BASE_MS", 600_000)
            .set("NOTIFIER_RETRY_MAX_MS", 600_000);
        let mut config = NotifierConfig::from_vars(&vars)?;
        // One deployment, one master key: the notifier opens what the projector's log holds.
        config.privacy = h.config.privacy.clone();
        Ok(Notifying {
            h,
            config,
            running: None,
        })
    }

    /// Builds and runs a notifier, then waits for its checkpoint row.
    pub(crate) async fn start_notifier(&mut self) -> anyhow::Result<()> {
        let notifier = Notifier::build(&self.config).await?;
        let shutdown = CancellationToken::new();
        let task = tokio::spawn(notifier.run(shutdown.clone()));
        self.running = Some((shutdown, task));
        let stream = self.config.common.event_log.stream.clone();
        let pool = self.pool().clone();
        eventually("the notifier's checkpoint", || {
            let (pool, stream) = (pool.clone(), stream.clone());
            async move { checkpoint(&pool, &stream).await }
        })
        .await?;
        Ok(())
    }

    /// Stops the notifier and waits for it to end.
    pub(crate) async fn stop_notifier(&mut self) -> anyhow::Result<()> {
        if let Some((shutdown, task)) = self.running.take() {
            shutdown.cancel();
            tokio::time::timeout(Duration::from_secs(15), task).await???;
        }
        Ok(())
    }

    pub(crate) fn pool(&self) -> &PgPool {
        self.h.pool()
    }

    /// Waits until the notifier's checkpoint reaches the stream's last sequence.
    pub(crate) async fn caught_up(&self) -> anyhow::Result<u64> {
        let mut stream = self
            .h
            .js
            .get_stream(&self.config.common.event_log.stream)
            .await?;
        let last = stream.info().await?.state.last_sequence;
        let (pool, name) = (
            self.pool().clone(),
            self.config.common.event_log.stream.clone(),
        );
        eventually(
            &format!("the notifier's checkpoint to reach {last}"),
            || {
                let (pool, name) = (pool.clone(), name.clone());
                async move {
                    Ok(checkpoint(&pool, &name)
                        .await?
                        .filter(|at| *at >= last as i64))
                }
            },
        )
        .await?;
        Ok(last)
    }

    /// A new account with one enabled webhook destination; returns (account, destination).
    pub(crate) async fn account(&self) -> anyhow::Result<(Uuid, Uuid)> {
        let account = Uuid::now_v7();
        sqlx::query("INSERT INTO accounts (id, name) VALUES ($1, 'alerts')")
            .bind(account)
            .execute(self.pool())
            .await?;
        let destination = self.destination(account).await?;
        Ok((account, destination))
    }

    /// Another webhook destination of `account`.
    pub(crate) async fn destination(&self, account: Uuid) -> anyhow::Result<Uuid> {
        let id = Uuid::now_v7();
        let sealed = SealingKey::new(SECRETS_KEY)?.seal(id.as_bytes(), &generate_secret());
        sqlx::query(
            "INSERT INTO alert_destinations (id, account_id, kind, name, url, secret_sealed)
             VALUES ($1, $2, 'webhook', 'nowhere', 'https://hooks.invalid/warden', $3)",
        )
        .bind(id)
        .bind(account)
        .bind(sealed)
        .execute(self.pool())
        .await?;
        Ok(id)
    }

    /// A rule of `account` (the spec JSON, with `kind`) sending to `destinations`.
    pub(crate) async fn rule(
        &self,
        account: Uuid,
        name: Option<&str>,
        spec: Value,
        destinations: &[Uuid],
    ) -> anyhow::Result<Uuid> {
        let id = Uuid::now_v7();
        let kind = spec["kind"].as_str().unwrap_or("unknown").to_owned();
        sqlx::query(
            "INSERT INTO alert_rules (id, account_id, kind, name, spec) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(id)
        .bind(account)
        .bind(kind)
        .bind(name)
        .bind(spec)
        .execute(self.pool())
        .await?;
        for destination in destinations {
            sqlx::query(
                "INSERT INTO alert_rule_destinations (rule_id, destination_id) VALUES ($1, $2)",
            )
            .bind(id)
            .bind(destination)
            .execute(self.pool())
            .await?;
        }
        Ok(id)
    }

    /// Sets `account`'s staff groups and sync interval (seconds).
    pub(crate) async fn settings(
        &self,
        account: Uuid,
        staff_groups: &[&str],
        sync_interval: i32,
    ) -> anyhow::Result<()> {
        sqlx::query(
            "INSERT INTO account_settings (account_id, staff_groups, sync_interval_seconds)
             VALUES ($1, $2, $3)",
        )
        .bind(account)
        .bind(staff_groups)
        .bind(sync_interval)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Every outbox row of `account`, oldest first.
    pub(crate) async fn rows(&self, account: Uuid) -> anyhow::Result<Vec<Row>> {
        Ok(sqlx::query_as(
            "SELECT destination_id, rule_id, event_type, payload, source_sequence
             FROM alert_deliveries WHERE account_id = $1 ORDER BY id",
        )
        .bind(account)
        .fetch_all(self.pool())
        .await?)
    }

    /// Waits until `account` has `count` outbox rows; fails if it gets more.
    pub(crate) async fn rows_reach(&self, account: Uuid, count: usize) -> anyhow::Result<Vec<Row>> {
        let rows = eventually(&format!("{count} outbox rows"), || async move {
            let rows = self.rows(account).await?;
            Ok((rows.len() >= count).then_some(rows))
        })
        .await?;
        assert_eq!(
            rows.len(),
            count,
            "more outbox rows than expected: {rows:#?}"
        );
        Ok(rows)
    }
}

/// The notifier's checkpoint on `stream`, once it exists.
pub(crate) async fn checkpoint(pool: &PgPool, stream: &str) -> anyhow::Result<Option<i64>> {
    Ok(
        sqlx::query_scalar("SELECT last_sequence FROM notifier_checkpoints WHERE stream = $1")
            .bind(stream)
            .fetch_optional(pool)
            .await?,
    )
}

impl Drop for Notifying {
    fn drop(&mut self) {
        if let Some((shutdown, _)) = &self.running {
            shutdown.cancel();
        }
    }
}
