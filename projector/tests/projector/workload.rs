//! A mixed, deterministic-in-shape workload for the crash and rebuild tests, a ledger of what
//! JetStream acknowledged, and the check "equal to a fresh fold of the same stream".

use crate::harness::{Harness, eventually};
use chrono::{DateTime, Duration, Utc};
use projector::Projector;
use serde_json::{Value, json};
use shared::envelope::{LogMessage, Logged, RecordBatch};
use shared::records::PluginRecord;
use sqlx::PgPool;
use test_support::TestDb;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

/// Acks awaited together when publishing a backlog.
const ACK_WINDOW: usize = 256;

/// Publishes a repeating mix of every record kind: mostly 100-record chat batches, with
/// custom events, sessions, heartbeats, punishments and revokes, flags and rank changes.
pub(crate) struct Workload {
    account: Uuid,
    players: Vec<Uuid>,
    servers: Vec<Uuid>,
    base: DateTime<Utc>,
    index: usize,
    /// Every record id JetStream acknowledged, and how many records that was.
    pub(crate) ledger: Ledger,
}

/// What the load generator was told is stored.
#[derive(Debug, Default)]
pub(crate) struct Ledger {
    /// Acknowledged chat record ids.
    pub(crate) chat_ids: Vec<Uuid>,
    /// Acknowledged records of every kind.
    pub(crate) records: usize,
    /// The last acknowledged stream sequence.
    pub(crate) last_sequence: u64,
}

impl Workload {
    /// A workload for one fresh account of 20 players on 3 servers.
    pub(crate) fn new() -> Workload {
        Workload::for_account(Uuid::now_v7())
    }

    /// A workload for `account`, of 20 players on 3 servers.
    pub(crate) fn for_account(account: Uuid) -> Workload {
        Workload {
            account,
            players: (0..20).map(|_| Uuid::new_v4()).collect(),
            servers: (0..3).map(|_| Uuid::new_v4()).collect(),
            base: Utc::now() - Duration::minutes(50),
            index: 0,
            ledger: Ledger::default(),
        }
    }

    /// A workload for one fresh account of `players` players on 3 servers.
    pub(crate) fn with_players(players: usize) -> Workload {
        Workload {
            players: (0..players).map(|_| Uuid::new_v4()).collect(),
            ..Workload::new()
        }
    }

    /// The partition of its account's messages in the harness's log.
    pub(crate) fn partition(&self, h: &Harness) -> u16 {
        h.config
            .common
            .event_log
            .subjects()
            .partition_of(self.account)
    }

    /// Publishes log messages until at least `records` more records are acknowledged.
    pub(crate) async fn publish_records(
        &mut self,
        h: &Harness,
        records: usize,
    ) -> anyhow::Result<u64> {
        let target = self.ledger.records + records;
        let mut acks = Vec::with_capacity(ACK_WINDOW);
        let mut pending = Vec::with_capacity(ACK_WINDOW);
        while self.ledger.records + pending.iter().map(|(n, _)| n).sum::<usize>() < target {
            let message = self.next_message();
            let chat: Vec<Uuid> = match &message.batch {
                RecordBatch::Chat(records) => records.iter().map(|r| r.id).collect(),
                _ => Vec::new(),
            };
            let name = match &message.batch {
                RecordBatch::Custom(records) => records.first().map(|r| r.record.name.clone()),
                _ => None,
            };
            let subject = h.config.common.event_log.subjects().for_records(
                message.account_id,
                message.kind(),
                name.as_deref(),
            );
            acks.push(h.js.publish(subject, message.encode().into()).await?);
            pending.push((message.batch.len(), chat));
            if acks.len() == ACK_WINDOW {
                self.settle(&mut acks, &mut pending).await?;
            }
        }
        self.settle(&mut acks, &mut pending).await?;
        Ok(self.ledger.last_sequence)
    }

    async fn settle(
        &mut self,
        acks: &mut Vec<async_nats::jetstream::context::PublishAckFuture>,
        pending: &mut Vec<(usize, Vec<Uuid>)>,
    ) -> anyhow::Result<()> {
        for (ack, (records, chat)) in acks.drain(..).zip(pending.drain(..)) {
            let ack = ack.await?;
            self.ledger.last_sequence = self.ledger.last_sequence.max(ack.sequence);
            self.ledger.records += records;
            self.ledger.chat_ids.extend(chat);
        }
        Ok(())
    }

    fn next_message(&mut self) -> LogMessage {
        let i = self.index;
        self.index += 1;
        let at = |k: usize| self.base + Duration::milliseconds((i * 10 + k) as i64);
        let player = |k: usize| self.players[(i + k) % self.players.len()];
        let server = self.servers[i % self.servers.len()];
        let message = |batch| LogMessage::new(self.account, at(9), batch);
        match i % 10 {
            0..=3 => message(batch::<shared::records::ChatEntry>(
                (0..100)
                    .map(|k| json!({"server_id": server, "player_uuid": player(k),
                        "entry_type": if k % 7 == 0 { "command" } else { "chat" },
                        "message": format!("line {i}.{k}"), "channel": "global", "sent_at": at(k % 10)}))
                    .collect(),
            )),
            4 => {
                let name = ["crate_opened", "vote"][(i / 10) % 2];
                message(batch::<shared::records::CustomEvent>(
                    (0..20)
                        .map(|k| json!({"player_uuid": player(k), "name": name,
                            "properties": {"n": k, "tier": "gold"}, "occurred_at": at(k % 10)}))
                        .collect(),
                ))
            }
            5 => message(batch::<shared::records::Session>(
                [(0, "join"), (1, "join"), (0, "quit"), (1, "quit")]
                    .into_iter()
                    .enumerate()
                    .map(|(k, (p, event))| json!({"server_id": server, "player_uuid": player(p),
                        "player_name": format!("P{}", (i + p) % 20), "event": event, "at": at(k),
                        "client_version": "1.21.4", "ip_hash": format!("h{p}")}))
                    .collect(),
            )),
            6 => message(batch::<shared::records::Heartbeat>(
                self.servers
                    .iter()
                    .enumerate()
                    // The first server is the network's proxy.
                    .map(|(n, s)| json!({"server_id": s, "tps": 19.5, "player_count": i % 50,
                        "max_players": 100, "timestamp": at(0), "name": "Lobby",
                        "version": "Paper 1.21.4", "online": true,
                        "role": if n == 0 { "proxy" } else { "server" }}))
                    .collect(),
            )),
            7 => message(batch::<shared::records::Punishment>(vec![
                json!({"server_id": server, "player_uuid": player(0), "type": "ban",
                    "reason": "x-ray", "staff_uuid": player(1), "issued_at": at(0),
                    "source_plugin": "litebans", "external_id": format!("b{i}")}),
                json!({"server_id": server, "player_uuid": player(2), "type": "ban",
                    "action": "revoke", "source_plugin": "litebans",
                    "external_id": format!("b{}", i.saturating_sub(10)), "issued_at": at(1),
                    "revoke_reason": "appeal"}),
            ])),
            8 => message(batch::<shared::records::AnticheatFlag>(
                (0..10)
                    .map(|k| json!({"server_id": server, "player_uuid": player(k),
                        "check_name": "Reach", "violation_level": k as f64 * 1.5,
                        "is_experimental": false, "flagged_at": at(k)}))
                    .collect(),
            )),
            _ => {
                let group = ["vip", "mod"][(i / 10) % 2];
                message(batch::<shared::records::RankChange>(vec![
                    json!({"player_uuid": player(0), "action": "set", "group": group,
                        "previous_group": "default", "changed_at": at(0)}),
                ]))
            }
        }
    }
}

/// One workload per partition of the harness's log, each for a fresh account of that partition.
pub(crate) fn one_per_partition(h: &Harness) -> Vec<Workload> {
    let subjects = h.config.common.event_log.subjects();
    (0..subjects.partitions())
        .map(|partition| {
            let account = std::iter::repeat_with(Uuid::now_v7)
                .find(|account| subjects.partition_of(*account) == partition)
                .unwrap_or_else(Uuid::now_v7);
            Workload::for_account(account)
        })
        .collect()
}

/// A batch of records of kind `T` from their JSON, each with a fresh id.
fn batch<T: PluginRecord + serde::de::DeserializeOwned>(records: Vec<Value>) -> RecordBatch {
    T::into_batch(
        records
            .into_iter()
            .map(|record| Logged {
                id: Uuid::now_v7(),
                record: serde_json::from_str(&record.to_string()).unwrap_or_else(|e| {
                    panic!("the workload made an invalid record {record}: {e}")
                }),
            })
            .collect(),
    )
}

/// Waits until every read model's checkpoint is at `sequence` or past it.
pub(crate) async fn every_checkpoint_at(pool: &PgPool, sequence: u64) -> anyhow::Result<()> {
    eventually(
        &format!("every checkpoint to reach {sequence}"),
        || async move {
            let lowest: Option<i64> =
                sqlx::query_scalar("SELECT min(last_sequence) FROM projection_checkpoints")
                    .fetch_one(pool)
                    .await?;
            Ok((lowest.unwrap_or(0) >= sequence as i64).then_some(()))
        },
    )
    .await
}

/// Every checkpoint, by read model.
pub(crate) async fn checkpoints(pool: &PgPool) -> anyhow::Result<Vec<(String, i64)>> {
    Ok(
        sqlx::query_as("SELECT projection, last_sequence FROM projection_checkpoints ORDER BY 1")
            .fetch_all(pool)
            .await?,
    )
}

/// The checkpoints of one partition, by read model.
pub(crate) async fn checkpoints_in(
    pool: &PgPool,
    partition: u16,
) -> anyhow::Result<Vec<(String, i64)>> {
    Ok(sqlx::query_as(
        "SELECT projection, last_sequence FROM projection_checkpoints
         WHERE log_partition = $1 ORDER BY 1",
    )
    .bind(i32::from(partition))
    .fetch_all(pool)
    .await?)
}

/// Folds the harness's stream from scratch into a new database with a fresh projector.
pub(crate) async fn fresh_fold(h: &Harness, last: u64) -> anyhow::Result<TestDb> {
    let db = TestDb::create().await?;
    let mut config = h.config.clone();
    config.database_url = db.url.clone().into();
    let projector = Projector::build(&config).await?;
    let shutdown = CancellationToken::new();
    let task = tokio::spawn(projector.run(shutdown.clone()));
    every_checkpoint_at(&db.pool, last).await?;
    shutdown.cancel();
    task.await??;
    Ok(db)
}

/// `(table, rows, digest of every row's values)` for every read-model table.
pub(crate) async fn contents(pool: &PgPool) -> anyhow::Result<Vec<(&'static str, i64, String)>> {
    let mut sums = Vec::new();
    for table in projector::projections::tables() {
        // The table names are the models' constants, so formatting them in is safe.
        let (rows, digest): (i64, String) = sqlx::query_as(&format!(
            "SELECT count(*), md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), ''))
             FROM {table} t"
        ))
        .fetch_one(pool)
        .await?;
        sums.push((table, rows, digest));
    }
    Ok(sums)
}

/// Fails unless both databases hold the same read models, table by table.
pub(crate) async fn assert_same_read_models(
    actual: &PgPool,
    expected: &PgPool,
) -> anyhow::Result<()> {
    let (actual, expected) = (contents(actual).await?, contents(expected).await?);
    for (a, e) in actual.iter().zip(&expected) {
        anyhow::ensure!(a == e, "{} differs from a fresh fold: {a:?} vs {e:?}", a.0);
    }
    Ok(())
}

/// Fails unless every acknowledged chat record is stored exactly once.
pub(crate) async fn assert_ledger_stored_once(
    pool: &PgPool,
    ledger: &Ledger,
) -> anyhow::Result<()> {
    let stored: i64 = sqlx::query_scalar("SELECT count(*) FROM chat_messages WHERE id = ANY($1)")
        .bind(&ledger.chat_ids)
        .fetch_one(pool)
        .await?;
    anyhow::ensure!(
        stored == ledger.chat_ids.len() as i64,
        "{} acknowledged chat records, {stored} stored",
        ledger.chat_ids.len()
    );
    Ok(())
}
