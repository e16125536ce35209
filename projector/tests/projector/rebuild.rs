//! `projector rebuild`: replays the log into fresh tables while the live projector
//! and readers carry on, swaps them in, and refuses a second rebuild meanwhile.

mod behind;
mod bulk;
mod checksums;
mod copy_load;
mod early_index;
mod kept_bound;
mod kill;
mod partitions;
mod players_kept;
mod process;

use crate::harness::{DEADLINE, Harness, table_checksum};
use crate::workload::{Workload, assert_same_read_models, contents};
use projector::projections::{self, ReadModel};
use projector::rebuild::{RebuildError, RebuildOptions, rebuild};
use sqlx::PgPool;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use test_support::TestDb;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

/// Waits until the live projector has applied everything the log holds now: each partition's
/// checkpoints at that partition's head (not the stream's last sequence, which a partition
/// whose accounts wrote nothing lately never reaches); returns the heads.
async fn live_caught_up(h: &Harness) -> anyhow::Result<Vec<u64>> {
    caught_up_on(h, h.pool()).await
}

async fn caught_up_on(h: &Harness, pool: &PgPool) -> anyhow::Result<Vec<u64>> {
    let stream = h.js.get_stream(&h.config.common.event_log.stream).await?;
    let subjects = h.config.common.event_log.subjects();
    let heads = shared::nats::partition_heads(&stream, &subjects).await?;
    crate::harness::eventually("every partition's checkpoints at its head", || async {
        Ok(test_support::caught_up(pool, &heads).await?.then_some(()))
    })
    .await?;
    Ok(heads)
}

/// Folds the harness's whole log from scratch into a new database with a fresh projector.
async fn fold_again(h: &Harness) -> anyhow::Result<TestDb> {
    let db = TestDb::create().await?;
    let mut config = h.config.clone();
    config.database_url = db.url.clone().into();
    let projector = projector::Projector::build(&config).await?;
    let shutdown = CancellationToken::new();
    let task = tokio::spawn(projector.run(shutdown.clone()));
    caught_up_on(h, &db.pool).await?;
    shutdown.cancel();
    tokio::time::timeout(DEADLINE, task).await???;
    Ok(db)
}

/// Records in the stream under rebuild; `WARDEN_REBUILD_TEST_RECORDS` raises it.
/// Schemas a rebuild made and did not drop (`rebuild_<time>`, `retired_<time>`).
async fn leftover_schemas(pool: &PgPool) -> anyhow::Result<i64> {
    Ok(sqlx::query_scalar(
        "SELECT count(*) FROM pg_namespace
         WHERE nspname LIKE 'rebuild\\_%' OR nspname LIKE 'retired\\_%'",
    )
    .fetch_one(pool)
    .await?)
}

fn large_stream_records() -> usize {
    std::env::var("WARDEN_REBUILD_TEST_RECORDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100_000)
}

fn all_models() -> RebuildOptions {
    RebuildOptions::default()
}

/// What the readers saw.
#[derive(Default)]
struct ReadStats {
    reads: AtomicU64,
    failed: AtomicU64,
    empty: AtomicU64,
}

/// Reads like query-api's dashboard does (a chatlog page, a player list, the timeline) in a
/// loop on `readers` connections until `stop`, counting failures and empty results.
fn hammer(
    pool: &PgPool,
    account: Uuid,
    readers: usize,
    stop: &CancellationToken,
) -> Arc<ReadStats> {
    let stats = Arc::new(ReadStats::default());
    for reader in 0..readers {
        let (pool, stop, stats) = (pool.clone(), stop.clone(), stats.clone());
        tokio::spawn(async move {
            let queries = [
                "SELECT id FROM chat_messages WHERE account_id = $1
                 ORDER BY sent_at DESC, id DESC LIMIT 50",
                "SELECT uuid FROM players WHERE account_id = $1 ORDER BY uuid LIMIT 50",
                "SELECT id FROM events WHERE account_id = $1
                 ORDER BY occurred_at DESC, seq DESC LIMIT 50",
                "SELECT id FROM sessions WHERE account_id = $1 LIMIT 50",
            ];
            let mut i = reader;
            while !stop.is_cancelled() {
                let result = sqlx::query_scalar::<_, Uuid>(queries[i % queries.len()])
                    .bind(account)
                    .fetch_all(&pool)
                    .await;
                stats.reads.fetch_add(1, Ordering::Relaxed);
                match result {
                    Ok(rows) if rows.is_empty() => stats.empty.fetch_add(1, Ordering::Relaxed),
                    Ok(_) => 0,
                    Err(error) => {
                        eprintln!("read failed: {error}");
                        stats.failed.fetch_add(1, Ordering::Relaxed)
                    }
                };
                i += 1;
            }
        });
    }
    stats
}

#[tokio::test]
async fn a_rebuild_under_reads_and_writes_swaps_in_a_fresh_fold_with_no_failed_read()
-> anyhow::Result<()> {
    let h = Harness::start().await?;
    let mut workload = Workload::new();
    let records = large_stream_records();
    let last = workload.publish_records(&h, records).await?;
    live_caught_up(&h).await?;

    let stop = CancellationToken::new();
    let stats = hammer(h.pool(), workload_account(&h).await?, 3, &stop);
    let writer = tokio::spawn({
        let (h_js, stop) = (h.js.clone(), stop.clone());
        let config = h.config.clone();
        async move { keep_writing(h_js, config, stop).await }
    });
    let started = Instant::now();
    let report = rebuild(&h.config, &all_models(), CancellationToken::new()).await?;
    let took = started.elapsed();
    stop.cancel();
    let written = writer.await??;

    let state =
        h.js.get_stream(&h.config.common.event_log.stream)
            .await?
            .info()
            .await?
            .state
            .clone();
    let stream_last = state.last_sequence;
    // For the disk estimate of `docs/operations.md` ("Retention and disk"): what a record
    // costs in the stream, all kinds mixed.
    eprintln!(
        "stream: {} bytes for {} records, {} bytes a record",
        state.bytes,
        records + written as usize,
        state.bytes / (records as u64 + written).max(1)
    );
    let heads = live_caught_up(&h).await?;
    let (reads, failed, empty) = (
        stats.reads.load(Ordering::Relaxed),
        stats.failed.load(Ordering::Relaxed),
        stats.empty.load(Ordering::Relaxed),
    );
    eprintln!(
        "rebuilt {records} records ({last} log messages) in {took:?}, swap {:?}; {reads} reads \
         meanwhile, {written} log messages written",
        report.swap
    );
    assert_eq!(failed, 0, "failed reads");
    assert_eq!(empty, 0, "empty reads");
    assert!(reads > 0);
    assert!(report.last_sequence >= last);
    let clean = fold_again(&h).await?;
    assert_same_read_models(h.pool(), &clean.pool).await?;
    // Each partition's checkpoints at its head, or past it up to the stream's end (a
    // partition holding every message of its own follows the end).
    let rows: Vec<(String, i32, i64)> = sqlx::query_as(
        "SELECT projection, log_partition, last_sequence FROM projection_checkpoints",
    )
    .fetch_all(h.pool())
    .await?;
    for (model, partition, at) in rows {
        let head = heads[usize::try_from(partition)?] as i64;
        assert!(
            (head..=stream_last as i64).contains(&at),
            "{model}'s checkpoint in partition {partition}: {at}, head {head}"
        );
    }
    Ok(())
}

/// The account the workload writes (the only one in the database).
async fn workload_account(h: &Harness) -> anyhow::Result<Uuid> {
    Ok(
        sqlx::query_scalar("SELECT account_id FROM chat_messages LIMIT 1")
            .fetch_one(h.pool())
            .await?,
    )
}

/// Publishes small chat batches for another account until `stop`; returns how many.
async fn keep_writing(
    js: async_nats::jetstream::Context,
    config: projector::Config,
    stop: CancellationToken,
) -> anyhow::Result<u64> {
    let (account, player, server) = (Uuid::now_v7(), Uuid::new_v4(), Uuid::new_v4());
    let mut written = 0;
    while !stop.is_cancelled() {
        let line = serde_json::json!({"server_id": server, "player_uuid": player,
            "entry_type": "chat", "message": format!("during the rebuild {written}"),
            "sent_at": chrono::Utc::now()});
        let record = shared::envelope::Logged {
            id: Uuid::now_v7(),
            record: serde_json::from_value::<shared::records::ChatEntry>(line)?,
        };
        let message = shared::envelope::LogMessage::new(
            account,
            chrono::Utc::now(),
            shared::envelope::RecordBatch::Chat(vec![record]),
        );
        let subject = config.common.event_log.subjects().for_records(
            account,
            shared::records::RecordKind::Chat,
            None,
        );
        js.publish(subject, message.encode().into()).await?.await?;
        written += 1;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(written)
}

#[tokio::test]
async fn a_second_rebuild_is_refused_while_one_runs() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let mut workload = Workload::new();
    let last = workload.publish_records(&h, 2_000).await?;
    live_caught_up(&h).await?;

    // Holding a checkpoint row keeps the first rebuild waiting at its swap.
    let mut holder = h.pool().begin().await?;
    sqlx::query("SELECT 1 FROM projection_checkpoints WHERE projection = 'players' FOR UPDATE")
        .execute(&mut *holder)
        .await?;
    let first = tokio::spawn({
        let config = h.config.clone();
        async move { rebuild(&config, &all_models(), CancellationToken::new()).await }
    });
    crate::harness::eventually("the first rebuild to create its tables", || async {
        let schemas: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'rebuild\\_%'",
        )
        .fetch_one(h.pool())
        .await?;
        Ok((schemas > 0).then_some(()))
    })
    .await?;

    let second = rebuild(&h.config, &all_models(), CancellationToken::new()).await;
    let Err(error) = second else {
        panic!("the second rebuild must be refused")
    };
    assert!(
        matches!(error.downcast_ref(), Some(RebuildError::AlreadyRunning)),
        "{error:#}"
    );
    assert!(format!("{error}").contains("already running"), "{error}");

    holder.rollback().await?;
    let report = tokio::time::timeout(Duration::from_secs(60), first).await???;
    assert!(report.last_sequence >= last);
    // Once it is done, the next rebuild may run.
    rebuild(&h.config, &all_models(), CancellationToken::new()).await?;
    Ok(())
}

#[tokio::test]
async fn rebuilding_twice_is_identical_and_one_model_rebuilds_alone() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let mut workload = Workload::new();
    workload.publish_records(&h, 5_000).await?;
    live_caught_up(&h).await?;
    let before = contents(h.pool()).await?;

    rebuild(&h.config, &all_models(), CancellationToken::new()).await?;
    let once = contents(h.pool()).await?;
    rebuild(&h.config, &all_models(), CancellationToken::new()).await?;
    let twice = contents(h.pool()).await?;
    assert_eq!(once, before, "a rebuild changed what the live fold held");
    assert_eq!(twice, once, "rebuilding twice");

    // One model alone: its table is new (fresh row versions), every other one untouched.
    let versions = |pool: PgPool| async move {
        let mut sums = Vec::new();
        for table in projector::projections::tables() {
            sums.push((table, table_checksum(&pool, table).await?));
        }
        anyhow::Ok(sums)
    };
    let old = versions(h.pool().clone()).await?;
    let options = RebuildOptions {
        models: vec![&projections::players::Players as &dyn ReadModel],
        progress_bar: false,
        progress: None,
    };
    let report = rebuild(&h.config, &options, CancellationToken::new()).await?;
    assert_eq!(report.models, [projections::by_name("players").unwrap()]);
    let new = versions(h.pool().clone()).await?;
    for ((table, old), (_, new)) in old.iter().zip(&new) {
        if projections::players::Players.tables().contains(table) {
            assert_ne!(old, new, "{table} (players model) was not rebuilt");
        } else {
            assert_eq!(old, new, "{table} was touched by a players-only rebuild");
        }
    }
    assert_eq!(contents(h.pool()).await?, once);

    // The swapped-in tables keep the migrations' index names, and nothing is left behind.
    let indexes: Vec<String> = sqlx::query_scalar(
        "SELECT indexname::text FROM pg_indexes WHERE tablename = 'players' ORDER BY 1",
    )
    .fetch_all(h.pool())
    .await?;
    assert_eq!(
        indexes,
        [
            "players_account_last_seen_idx",
            "players_account_lower_previous_rank_idx",
            "players_account_lower_rank_idx",
            "players_account_rank_idx",
            "players_names_trgm_idx",
            "players_pkey",
            "players_username_prefix_idx",
        ]
    );
    assert_eq!(leftover_schemas(h.pool()).await?, 0);
    Ok(())
}
