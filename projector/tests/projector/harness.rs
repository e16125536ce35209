//! A projector wired to a private nats-server and a fresh database, plus publishing and
//! polling helpers.

use async_nats::jetstream;
use chrono::{DateTime, Utc};
use projector::{Config, Projector};
use shared::envelope::{LogMessage, Logged};
use shared::records::PluginRecord;
use sqlx::PgPool;
use std::future::Future;
use std::time::Duration;
use test_support::{NatsServer, TestDb, private_event_log, test_vars};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

/// How long a test waits for the projector to catch up.
pub(crate) const DEADLINE: Duration = Duration::from_secs(60);
const POLL: Duration = Duration::from_millis(25);
/// How long a test's own readiness checks give each probe: on a loaded machine a probe can
/// outlast the served 2 s, and a timed-out probe reads as unready for a reason no test is about.
const PROBE_TIMEOUT: Duration = Duration::from_secs(20);

/// A running projector and what it reads from and writes to.
pub(crate) struct Harness {
    pub(crate) nats: NatsServer,
    pub(crate) db: TestDb,
    pub(crate) config: Config,
    pub(crate) js: jetstream::Context,
    /// The settings `config` was loaded from (a child process of the same deployment, such
    /// as `projector parked retry`, takes them as its environment).
    pub(crate) vars: shared::config::Vars,
    /// The readiness probes of the running projector (each under [`PROBE_TIMEOUT`]).
    pub(crate) readiness: Option<shared::health::Readiness>,
    running: Option<(CancellationToken, JoinHandle<anyhow::Result<()>>)>,
}

impl Harness {
    /// Starts nats-server, creates a database and starts a projector on them.
    pub(crate) async fn start() -> anyhow::Result<Harness> {
        Harness::start_with(|_| {}).await
    }

    /// Like [`Harness::start`], with the projector's config changed by `configure` first.
    pub(crate) async fn start_with(configure: impl FnOnce(&mut Config)) -> anyhow::Result<Harness> {
        shared::telemetry::init_test_tracing();
        let nats = NatsServer::start().await?;
        let db = TestDb::create().await?;
        let vars = test_vars(&nats.url())
            .with_event_log(&private_event_log())
            .set("DATABASE_URL", &db.url)
            .set("PROJECTOR_BATCH_WAIT_MS", 20);
        let config = Config::from_vars(&vars)?;
        let mut config = config;
        configure(&mut config);
        let js = jetstream::new(async_nats::connect(nats.url()).await?);
        let mut harness = Harness {
            nats,
            db,
            config,
            js,
            vars,
            readiness: None,
            running: None,
        };
        harness.start_projector().await?;
        Ok(harness)
    }

    /// Builds a new `Projector` on the same database and stream and runs it in a task.
    pub(crate) async fn start_projector(&mut self) -> anyhow::Result<()> {
        let projector = Projector::build(&self.config).await?;
        self.readiness = Some(patient(&projector.readiness));
        let shutdown = CancellationToken::new();
        let task = tokio::spawn(projector.run(shutdown.clone()));
        self.running = Some((shutdown, task));
        Ok(())
    }

    /// Stops the running projector and waits for it to end.
    pub(crate) async fn stop_projector(&mut self) -> anyhow::Result<()> {
        if let Some((shutdown, task)) = self.running.take() {
            shutdown.cancel();
            tokio::time::timeout(Duration::from_secs(10), task).await???;
        }
        Ok(())
    }

    pub(crate) fn pool(&self) -> &PgPool {
        &self.db.pool
    }

    /// A keyring over this log's privacy buckets (as the projector's config builds it).
    pub(crate) async fn keyring(&self) -> anyhow::Result<shared::privacy::Keyring> {
        let config = &self.config;
        config
            .privacy
            .keyring(&self.js, &config.common.event_log)
            .await
    }

    /// Publishes raw bytes to the log; returns the stream sequence.
    pub(crate) async fn publish_raw(
        &self,
        subject: String,
        payload: Vec<u8>,
    ) -> anyhow::Result<u64> {
        let ack = self.js.publish(subject, payload.into()).await?.await?;
        Ok(ack.sequence)
    }

    /// Publishes one log message of `records` for `account`; returns the stream sequence.
    pub(crate) async fn publish<T: PluginRecord>(
        &self,
        account: Uuid,
        received_at: DateTime<Utc>,
        records: Vec<Logged<T>>,
    ) -> anyhow::Result<u64> {
        let name = records
            .first()
            .and_then(|r| r.record.subject_name().map(str::to_owned));
        let subject =
            self.config
                .common
                .event_log
                .subjects()
                .for_records(account, T::KIND, name.as_deref());
        let message = LogMessage::new(account, received_at, T::into_batch(records));
        self.publish_raw(subject, message.encode()).await
    }

    /// Publishes one log message of staff notes for `account` (as query-api does); returns the
    /// stream sequence.
    pub(crate) async fn publish_notes(
        &self,
        account: Uuid,
        received_at: DateTime<Utc>,
        notes: Vec<Logged<shared::records::Note>>,
    ) -> anyhow::Result<u64> {
        let batch = shared::records::Note::into_batch(notes);
        self.publish_dashboard(account, received_at, batch).await
    }

    /// Publishes one log message of records query-api writes (notes, actions, appeals) for
    /// `account`; returns the stream sequence.
    pub(crate) async fn publish_dashboard(
        &self,
        account: Uuid,
        received_at: DateTime<Utc>,
        batch: shared::envelope::RecordBatch,
    ) -> anyhow::Result<u64> {
        let subject =
            self.config
                .common
                .event_log
                .subjects()
                .for_records(account, batch.kind(), None);
        let message = LogMessage::new(account, received_at, batch);
        self.publish_raw(subject, message.encode()).await
    }

    /// Waits until every read model's checkpoint reaches `sequence`.
    pub(crate) async fn caught_up_to(&self, sequence: u64) -> anyhow::Result<()> {
        let pool = self.pool().clone();
        eventually(&format!("checkpoint to reach {sequence}"), || {
            let pool = pool.clone();
            async move {
                let last = checkpoint(&pool).await?;
                Ok((last >= sequence as i64).then_some(()))
            }
        })
        .await
    }

    /// Waits until every read model's checkpoint reaches the stream's last sequence.
    pub(crate) async fn caught_up(&self) -> anyhow::Result<u64> {
        let mut stream = self
            .js
            .get_stream(&self.config.common.event_log.stream)
            .await?;
        let last = stream.info().await?.state.last_sequence;
        self.caught_up_to(last).await?;
        Ok(last)
    }
}

/// The lowest read model's checkpoint (0 before the projector created them): every model
/// applies its chunks in its own transaction, so this is where all of them stand.
pub(crate) async fn checkpoint(pool: &PgPool) -> anyhow::Result<i64> {
    let last: Option<i64> =
        sqlx::query_scalar("SELECT min(last_sequence) FROM projection_checkpoints")
            .fetch_one(pool)
            .await?;
    Ok(last.unwrap_or(0))
}

/// A digest of every row of `events`, including each row's version (xmin) and place (ctid),
/// so a rewrite of identical values still changes it.
pub(crate) async fn events_checksum(pool: &PgPool) -> anyhow::Result<(i64, String)> {
    let row: (i64, Option<String>) = sqlx::query_as(
        "SELECT count(*), md5(string_agg(concat_ws('|', xmin::text, ctid::text, account_id, id,
                    seq, name, is_internal, player_uuid, server_id, properties::text,
                    occurred_at, received_at), E'\\n' ORDER BY account_id, id))
         FROM events",
    )
    .fetch_one(pool)
    .await?;
    Ok((row.0, row.1.unwrap_or_default()))
}

/// A digest of every row of `table` like [`events_checksum`]: each row's text, version (xmin)
/// and place (ctid), so a rewrite of identical values still changes it.
pub(crate) async fn table_checksum(pool: &PgPool, table: &str) -> anyhow::Result<(i64, String)> {
    let row: (i64, Option<String>) = sqlx::query_as(&format!(
        "SELECT count(*), md5(string_agg(concat_ws('|', t.xmin::text, t.ctid::text, t::text),
                E'\\n' ORDER BY t::text))
         FROM {table} t"
    ))
    .fetch_one(pool)
    .await?;
    Ok((row.0, row.1.unwrap_or_default()))
}

/// `readiness` with every probe under [`PROBE_TIMEOUT`] instead of the served timeout.
pub(crate) fn patient(readiness: &shared::health::Readiness) -> shared::health::Readiness {
    readiness.clone().with_timeout(PROBE_TIMEOUT)
}

/// Polls `check` until it yields a value, failing after [`DEADLINE`].
pub(crate) async fn eventually<T, F, Fut>(what: &str, mut check: F) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = anyhow::Result<Option<T>>>,
{
    let deadline = tokio::time::Instant::now() + DEADLINE;
    loop {
        if let Some(value) = check().await? {
            return Ok(value);
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "timed out after {DEADLINE:?} waiting for {what}"
        );
        tokio::time::sleep(POLL).await;
    }
}

/// A record with a fresh id.
pub(crate) fn logged<T: serde::de::DeserializeOwned>(json: &str) -> Logged<T> {
    logged_as(Uuid::now_v7(), json)
}

/// A record with the given id.
pub(crate) fn logged_as<T: serde::de::DeserializeOwned>(id: Uuid, json: &str) -> Logged<T> {
    Logged {
        id,
        record: serde_json::from_str(json)
            .unwrap_or_else(|e| panic!("bad test record {json}: {e}")),
    }
}

/// Builds a custom event record.
pub(crate) fn custom_event(player: Uuid, name: &str, properties: &str) -> String {
    format!(
        r#"{{"player_uuid":"{player}","name":"{name}","properties":{properties},
            "occurred_at":"2025-03-01T11:00:00Z"}}"#
    )
}

impl Drop for Harness {
    fn drop(&mut self) {
        if let Some((shutdown, _)) = &self.running {
            shutdown.cancel();
        }
    }
}
