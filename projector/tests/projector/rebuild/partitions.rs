//! A rebuild of a partitioned log: every partition replays with its own consumer
//! and checkpoints, legacy-form messages included, and the swap sets each partition's live
//! checkpoints to where that partition of the copy stands.

use super::{fold_again, keep_writing, live_caught_up};
use crate::harness::{DEADLINE, Harness, eventually, logged, table_checksum};
use crate::workload::{assert_same_read_models, contents};
use chrono::{DateTime, Utc};
use projector::rebuild::{RebuildOptions, rebuild};
use serde_json::json;
use shared::envelope::LogMessage;
use shared::records::{ChatEntry, PluginRecord, Punishment, Session};
use shared::subjects::Subjects;
use std::collections::{BTreeMap, BTreeSet};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

/// Accounts in 4 distinct partitions, partition 0 among them.
fn accounts_in_distinct_partitions(subjects: &Subjects) -> Vec<Uuid> {
    let mut by_partition = BTreeMap::new();
    while by_partition.len() < 4 || !by_partition.contains_key(&0) {
        let account = Uuid::new_v4();
        by_partition
            .entry(subjects.partition_of(account))
            .or_insert(account);
        if by_partition.len() > 4 {
            by_partition.retain(|partition, _| *partition == 0);
        }
    }
    by_partition.into_values().collect()
}

/// Publishes one round for `account` (5 chat lines, a join, a ban) on its partition's subjects,
/// or on the legacy ones (`<prefix>.ev.<account>.<kind>`, as logs written before partitions
/// hold them); returns the chat lines' ids.
async fn publish_round(
    h: &Harness,
    account: Uuid,
    round: usize,
    legacy: bool,
) -> anyhow::Result<Vec<Uuid>> {
    let (server, player) = (Uuid::from_u128(1), Uuid::from_u128(2 + round as u128));
    let at: DateTime<Utc> = Utc::now() - chrono::Duration::minutes(30);
    let chat: Vec<_> = (0..5)
        .map(|k| {
            logged::<ChatEntry>(
                &json!({"server_id": server, "player_uuid": player, "entry_type": "chat",
                    "message": format!("round {round} line {k}"), "sent_at": at})
                .to_string(),
            )
        })
        .collect();
    let ids = chat.iter().map(|r| r.id).collect();
    let join = logged::<Session>(
        &json!({"server_id": server, "player_uuid": player, "player_name": format!("P{round}"),
            "event": "join", "at": at, "client_version": "1.21.4", "ip_hash": "h"})
        .to_string(),
    );
    let ban = logged::<Punishment>(
        &json!({"server_id": server, "player_uuid": player, "type": "ban", "reason": "x-ray",
            "staff_uuid": server, "issued_at": at, "source_plugin": "litebans",
            "external_id": format!("b{round}")})
        .to_string(),
    );
    let log = &h.config.common.event_log;
    for message in [
        LogMessage::new(account, at, ChatEntry::into_batch(chat)),
        LogMessage::new(account, at, Session::into_batch(vec![join])),
        LogMessage::new(account, at, Punishment::into_batch(vec![ban])),
    ] {
        let kind = message.kind();
        let subject = if legacy {
            format!("{}.ev.{account}.{}", log.subject_prefix, kind.as_str())
        } else {
            log.subjects().for_records(account, kind, None)
        };
        h.publish_raw(subject, message.encode()).await?;
    }
    Ok(ids)
}

/// Publishes `rounds` rounds for every account, every third one in the legacy form; returns
/// the chat ids by account.
async fn publish_rounds(
    h: &Harness,
    accounts: &[Uuid],
    rounds: std::ops::Range<usize>,
    chat: &mut BTreeMap<Uuid, BTreeSet<Uuid>>,
) -> anyhow::Result<()> {
    for round in rounds {
        for (i, account) in accounts.iter().enumerate() {
            let legacy = (round + i) % 3 == 0;
            let ids = publish_round(h, *account, round, legacy).await?;
            chat.entry(*account).or_default().extend(ids);
        }
    }
    Ok(())
}

/// `(projection, partition, checkpoint)` of every live checkpoint row.
async fn live_checkpoints(h: &Harness) -> anyhow::Result<Vec<(String, i32, i64)>> {
    Ok(sqlx::query_as(
        "SELECT projection, log_partition, last_sequence FROM projection_checkpoints ORDER BY 1, 2",
    )
    .fetch_all(h.pool())
    .await?)
}

/// Fails unless the live chat lines of each account are exactly `chat`'s (each once).
async fn assert_chat_stored_once(
    h: &Harness,
    chat: &BTreeMap<Uuid, BTreeSet<Uuid>>,
) -> anyhow::Result<()> {
    for (account, ids) in chat {
        let stored: Vec<Uuid> =
            sqlx::query_scalar("SELECT id FROM chat_messages WHERE account_id = $1 ORDER BY id")
                .bind(account)
                .fetch_all(h.pool())
                .await?;
        let expected: Vec<Uuid> = ids.iter().copied().collect();
        anyhow::ensure!(stored == expected, "chat lines of {account}");
    }
    Ok(())
}

#[tokio::test]
async fn a_rebuild_replays_each_partition_into_its_own_checkpoints() -> anyhow::Result<()> {
    // Without a live projector: what the swapped-in tables hold is the rebuild's alone.
    let mut h = Harness::start().await?;
    h.stop_projector().await?;
    let subjects = h.config.common.event_log.subjects();
    let accounts = accounts_in_distinct_partitions(&subjects);
    let mut chat = BTreeMap::new();
    publish_rounds(&h, &accounts, 0..4, &mut chat).await?;
    let stream = h.js.get_stream(&h.config.common.event_log.stream).await?;
    let heads = shared::nats::partition_heads(&stream, &subjects).await?;
    assert_eq!(heads.len(), usize::from(subjects.partitions()));
    // The live checkpoints at each partition's head (as a live projector caught up leaves
    // them): the copy must replay every partition to its head before it may swap in.
    sqlx::query(
        "UPDATE projection_checkpoints c SET last_sequence = h.head
         FROM UNNEST($1::bigint[]) WITH ORDINALITY AS h(head, k)
         WHERE c.log_partition = h.k - 1",
    )
    .bind(heads.iter().map(|h| *h as i64).collect::<Vec<_>>())
    .execute(h.pool())
    .await?;

    let report = rebuild(
        &h.config,
        &RebuildOptions::default(),
        CancellationToken::new(),
    )
    .await?;
    // Each partition of the copy at its head, or at the stream's end (past the head) once it
    // held every message of its own.
    let end = stream.cached_info().state.last_sequence;
    assert_eq!(report.positions.len(), heads.len());
    for (k, (position, head)) in report.positions.iter().zip(&heads).enumerate() {
        assert!(
            (head..=&end).contains(&position),
            "partition {k}: {position}, head {head}"
        );
    }
    let models = projector::projections::READ_MODELS.len();
    let rows = live_checkpoints(&h).await?;
    assert_eq!(rows.len(), models * heads.len(), "{rows:?}");
    for (projection, partition, at) in &rows {
        let position = report.positions[usize::try_from(*partition)?];
        assert_eq!(
            *at, position as i64,
            "{projection}'s checkpoint in partition {partition}"
        );
    }
    // Every account's lines, partitioned and legacy, once: another partition's legacy
    // messages were left out of each partition's replay.
    assert_chat_stored_once(&h, &chat).await?;
    let bans: i64 = sqlx::query_scalar("SELECT count(*) FROM punishments")
        .fetch_one(h.pool())
        .await?;
    assert_eq!(bans, (accounts.len() * 4) as i64, "bans");

    // The partitions replay concurrently, in any interleaving: the same tables every time.
    let once = contents(h.pool()).await?;
    rebuild(
        &h.config,
        &RebuildOptions::default(),
        CancellationToken::new(),
    )
    .await?;
    assert_eq!(contents(h.pool()).await?, once, "rebuilding twice");
    Ok(())
}

/// Needs the live projector to consume every partition.
#[tokio::test]
async fn a_rebuild_under_the_live_projector_equals_its_fold_in_every_partition()
-> anyhow::Result<()> {
    let h = Harness::start().await?;
    let subjects = h.config.common.event_log.subjects();
    let accounts = accounts_in_distinct_partitions(&subjects);
    let mut chat = BTreeMap::new();
    publish_rounds(&h, &accounts, 0..3, &mut chat).await?;
    let before = live_caught_up(&h).await?;

    let stop = CancellationToken::new();
    let writer = tokio::spawn({
        let (js, config, stop) = (h.js.clone(), h.config.clone(), stop.clone());
        async move { keep_writing(js, config, stop).await }
    });
    let report = rebuild(
        &h.config,
        &RebuildOptions::default(),
        CancellationToken::new(),
    )
    .await?;
    stop.cancel();
    writer.await??;
    for (k, (position, head)) in report.positions.iter().zip(&before).enumerate() {
        assert!(
            position >= head,
            "partition {k}: copy at {position}, head {head}"
        );
    }
    // The live checkpoints of each partition cover what the copy of that partition applied.
    for (projection, partition, at) in live_checkpoints(&h).await? {
        let position = report.positions[usize::try_from(partition)?];
        assert!(
            at >= position as i64,
            "{projection} in partition {partition}: {at} < {position}"
        );
    }
    live_caught_up(&h).await?;
    let clean = fold_again(&h).await?;
    assert_same_read_models(h.pool(), &clean.pool).await?;

    // The live projector carries on from the moved checkpoints: nothing applied twice.
    publish_rounds(&h, &accounts, 3..5, &mut chat).await?;
    live_caught_up(&h).await?;
    assert_chat_stored_once(&h, &chat).await?;
    let clean = fold_again(&h).await?;
    assert_same_read_models(h.pool(), &clean.pool).await?;
    Ok(())
}

#[tokio::test]
async fn an_interrupted_rebuild_leaves_every_partition_as_it_was() -> anyhow::Result<()> {
    let mut h = Harness::start().await?;
    let subjects = h.config.common.event_log.subjects();
    let accounts = accounts_in_distinct_partitions(&subjects);
    publish_rounds(&h, &accounts, 0..2, &mut BTreeMap::new()).await?;
    live_caught_up(&h).await?;
    // Stopped, so nothing but the rebuild could move a checkpoint or write a table.
    h.stop_projector().await?;
    let checkpoints = live_checkpoints(&h).await?;
    let mut tables = Vec::new();
    for table in projector::projections::tables() {
        tables.push(table_checksum(h.pool(), table).await?);
    }

    // One model's checkpoint held in a partition other than 0: the swap, which locks every
    // partition's, waits on it.
    let partition = i32::from(subjects.partition_of(accounts[1]));
    assert_ne!(partition, 0);
    let mut holder = h.pool().begin().await?;
    sqlx::query(
        "SELECT 1 FROM projection_checkpoints
         WHERE projection = 'players' AND log_partition = $1 FOR UPDATE",
    )
    .bind(partition)
    .execute(&mut *holder)
    .await?;
    let shutdown = CancellationToken::new();
    let rebuilding = tokio::spawn({
        let (config, shutdown) = (h.config.clone(), shutdown.clone());
        async move { rebuild(&config, &RebuildOptions::default(), shutdown).await }
    });
    eventually("the swap to wait for the held checkpoint", || async {
        let waiting: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_stat_activity
             WHERE datname = current_database() AND wait_event_type = 'Lock'
               AND query LIKE '%projection_checkpoints%FOR UPDATE%'",
        )
        .fetch_one(h.pool())
        .await?;
        Ok((waiting > 0).then_some(()))
    })
    .await?;
    shutdown.cancel();
    let outcome = tokio::time::timeout(DEADLINE, rebuilding).await??;
    holder.rollback().await?;
    let Err(error) = outcome else {
        panic!("an interrupted rebuild must fail")
    };
    assert!(format!("{error:#}").contains("interrupted"), "{error:#}");

    assert_eq!(live_checkpoints(&h).await?, checkpoints, "live checkpoints");
    for (table, before) in projector::projections::tables().zip(&tables) {
        // Row versions included: the live tables were not even rewritten.
        assert_eq!(&table_checksum(h.pool(), table).await?, before, "{table}");
    }
    assert_eq!(
        super::leftover_schemas(h.pool()).await?,
        0,
        "schemas left behind"
    );
    Ok(())
}
