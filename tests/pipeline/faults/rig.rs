//! In-process ingest (`ingest::App`) and projector on a private nats-server and a given
//! database, a load generator that keeps a ledger of every 2xx, and read-model comparisons.

use async_nats::jetstream;
use projector::Projector;
use serde_json::json;
use shared::keys::{KeyEntry, KeyKind, generate_secret, hash_secret};
use sqlx::PgPool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use test_support::{NatsServer, TestDb, private_event_log, test_vars};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

/// Ingest and a projector wired to one nats-server and one database.
pub(crate) struct Rig {
    nats_url: String,
    pub(crate) projector_config: projector::Config,
    pub(crate) ingest_base: String,
    plugin_key: String,
    http: reqwest::Client,
    shutdown: CancellationToken,
    /// The live projector.
    _projector: JoinHandle<anyhow::Result<()>>,
}

impl Rig {
    /// Starts ingest and a projector on `nats` and `db`.
    pub(crate) async fn start(nats: &NatsServer, db: &TestDb) -> anyhow::Result<Rig> {
        shared::telemetry::init_test_tracing();
        let vars = test_vars(&nats.url())
            .with_event_log(&private_event_log())
            .set("DATABASE_URL", &db.url)
            .set("PROJECTOR_BATCH_MAX", 50)
            .set("KEY_USAGE_FLUSH_SECS", 30);
        let shutdown = CancellationToken::new();
        let ingest_config = ingest::Config::from_vars(&vars)?;
        let event_log = ingest_config.common.event_log.clone();
        let ingest = ingest::App::build(ingest_config, shutdown.clone()).await?;
        let ingest_base = format!("http://{}", ingest.local_addr());
        tokio::spawn(ingest.run_until_stopped(shutdown.clone()));
        let projector_config = projector::Config::from_vars(&vars)?;
        let projector = Projector::build(&projector_config).await?;
        let task = tokio::spawn(projector.run(shutdown.clone()));

        let plugin_key = generate_secret(KeyKind::Plugin);
        let entry = KeyEntry {
            key_id: Uuid::now_v7(),
            account_id: Uuid::now_v7(),
            kind: KeyKind::Plugin,
            expires_at: None,
        };
        jetstream::new(async_nats::connect(nats.url()).await?)
            .get_key_value(&event_log.key_bucket)
            .await?
            .put(hash_secret(&plugin_key), serde_json::to_vec(&entry)?.into())
            .await?;
        let rig = Rig {
            nats_url: nats.url(),
            projector_config,
            ingest_base,
            plugin_key,
            http: reqwest::Client::new(),
            shutdown,
            _projector: task,
        };
        let deadline = Instant::now() + pipeline_tests::WAIT;
        while rig.post_chat(1).await.status != 202 {
            anyhow::ensure!(Instant::now() < deadline, "ingest never accepted the key");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(rig)
    }

    /// Posts `n` chat lines with client ids.
    pub(crate) async fn post_chat(&self, n: usize) -> Posted {
        let ids: Vec<Uuid> = (0..n).map(|_| Uuid::now_v7()).collect();
        let lines: Vec<_> = ids
            .iter()
            .map(|id| {
                json!({"id": id, "server_id": "7d6b4c0e-1d1f-4f7e-9a53-8c1f3f3c2a10",
                "player_uuid": "069a79f4-44e9-4726-a5be-fca90e38aaf5", "entry_type": "chat",
                "message": "steady", "channel": "global"})
            })
            .collect();
        let sent = Instant::now();
        let status = self
            .http
            .post(format!("{}/api/plugin/chat", self.ingest_base))
            .bearer_auth(&self.plugin_key)
            .json(&lines)
            .send()
            .await
            .map_or(0, |r| r.status().as_u16());
        Posted {
            ids,
            status,
            sent,
            answered: Instant::now(),
        }
    }

    /// The stream's last sequence, and where each partition's reader must get to for
    /// everything in the log now ([`shared::nats::partition_heads`]).
    pub(crate) async fn stream_heads(&self) -> anyhow::Result<(u64, Vec<u64>)> {
        let js = jetstream::new(async_nats::connect(&self.nats_url).await?);
        let log = &self.projector_config.common.event_log;
        let mut stream = js.get_stream(&log.stream).await?;
        let last = stream.info().await?.state.last_sequence;
        // The rig's configuration made the stream, so its partitions are the stream's.
        let heads = shared::nats::partition_heads(&stream, &log.subjects()).await?;
        Ok((last, heads))
    }

    /// Folds the stream from scratch into `db` with a fresh projector, up to `heads`.
    pub(crate) async fn fresh_fold(&self, db: &TestDb, heads: &[u64]) -> anyhow::Result<()> {
        let mut config = self.projector_config.clone();
        config.database_url = db.url.clone().into();
        let projector = Projector::build(&config).await?;
        let stop = CancellationToken::new();
        let task = tokio::spawn(projector.run(stop.clone()));
        every_checkpoint_at(&db.pool, heads).await?;
        stop.cancel();
        task.await??;
        Ok(())
    }
}

impl Drop for Rig {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// One request the load generator sent and what came back.
#[derive(Debug, Clone)]
pub(crate) struct Posted {
    pub(crate) ids: Vec<Uuid>,
    /// The HTTP status, 0 when no answer came.
    pub(crate) status: u16,
    pub(crate) sent: Instant,
    pub(crate) answered: Instant,
}

/// Posts chat batches from `tasks` concurrent tasks until `stop`; every answer goes in the
/// returned log, so the 2xx among them are the ledger.
pub(crate) fn load(
    rig: &Arc<Rig>,
    tasks: usize,
    pause: Duration,
    stop: &CancellationToken,
) -> (Arc<Mutex<Vec<Posted>>>, Vec<JoinHandle<()>>) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let handles = (0..tasks)
        .map(|_| {
            let (rig, stop, log) = (rig.clone(), stop.clone(), log.clone());
            tokio::spawn(async move {
                while !stop.is_cancelled() {
                    let posted = rig.post_chat(10).await;
                    log.lock().map(|mut log| log.push(posted)).ok();
                    tokio::time::sleep(pause).await;
                }
            })
        })
        .collect();
    (log, handles)
}

/// Waits (60 s at most) until every checkpoint of each partition is at that partition's
/// head (`heads`, from [`Rig::stream_heads`]) or past it.
pub(crate) async fn every_checkpoint_at(pool: &PgPool, heads: &[u64]) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !test_support::caught_up(pool, heads).await.unwrap_or(false) {
        anyhow::ensure!(
            Instant::now() < deadline,
            "checkpoints never reached the partitions' heads {heads:?}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    Ok(())
}

/// Fails unless every id of a 2xx answer is stored in `chat_messages` exactly once.
pub(crate) async fn assert_ledger_stored_once(pool: &PgPool, log: &[Posted]) -> anyhow::Result<()> {
    let ledger: Vec<Uuid> = log
        .iter()
        .filter(|p| (200..300).contains(&p.status))
        .flat_map(|p| p.ids.iter().copied())
        .collect();
    let stored: i64 = sqlx::query_scalar("SELECT count(*) FROM chat_messages WHERE id = ANY($1)")
        .bind(&ledger)
        .fetch_one(pool)
        .await?;
    anyhow::ensure!(
        stored == ledger.len() as i64,
        "{} acknowledged records, {stored} stored",
        ledger.len()
    );
    Ok(())
}

/// Fails unless both databases hold the same read models, table by table.
pub(crate) async fn assert_same_read_models(
    actual: &PgPool,
    expected: &PgPool,
) -> anyhow::Result<()> {
    // Every table a registered read model writes (the registry's list, so a new model is
    // compared too). The names are constants, so formatting them in is safe.
    for table in projector::projections::tables() {
        let sql = format!(
            "SELECT count(*), md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), ''))
             FROM {table} t"
        );
        let a: (i64, String) = sqlx::query_as(&sql).fetch_one(actual).await?;
        let e: (i64, String) = sqlx::query_as(&sql).fetch_one(expected).await?;
        anyhow::ensure!(a == e, "{table} differs from a fresh fold: {a:?} vs {e:?}");
    }
    Ok(())
}
