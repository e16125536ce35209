//! Partitions by account: projector processes rebalance the partitions under load,
//! a database of the pre-partition version resumes where it stood, legacy-subject messages are
//! applied by their account's partition only, and a pre-partition projector still holding the
//! stream keeps this version from consuming.

use crate::harness::{Harness, custom_event, events_checksum, eventually, logged};
use crate::leadership::{held_as, publish_on_all};
use crate::workload::{
    assert_ledger_stored_once, assert_same_read_models, every_checkpoint_at, fresh_fold,
    one_per_partition,
};
use chrono::Utc;
use projector::Projector;
use shared::envelope::LogMessage;
use shared::records::{CustomEvent, PluginRecord};
use sqlx::{Connection, PgPool};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

#[tokio::test]
async fn a_second_process_takes_half_the_partitions_under_load_and_gives_them_back()
-> anyhow::Result<()> {
    let h = Harness::start().await?;
    let partitions = i64::from(h.config.common.event_log.subjects().partitions());
    let mut workloads = one_per_partition(&h);
    held_as(h.pool(), "the first process to hold every partition", |c| {
        c == [partitions]
    })
    .await?;

    let second = Projector::build(&h.config).await?;
    let readiness = crate::harness::patient(&second.readiness);
    let stop_second = CancellationToken::new();
    let running = tokio::spawn(second.run(stop_second.clone()));
    // Messages for every partition keep coming while the partitions move.
    let fair = (partitions + 1) / 2;
    let deadline = Instant::now() + crate::harness::DEADLINE;
    let split = loop {
        publish_on_all(&h, &mut workloads, 100).await?;
        let counts: Vec<i64> = crate::leadership::holders(h.pool())
            .await?
            .into_iter()
            .map(|(_, n)| n)
            .collect();
        // The first process lets partitions go one by one while the second takes them, so
        // a split in passing (e.g. [6, 2]) is not yet the fair one.
        if counts.len() == 2
            && counts.iter().sum::<i64>() == partitions
            && counts.iter().all(|n| *n <= fair)
        {
            break counts;
        }
        anyhow::ensure!(Instant::now() < deadline, "never split fairly: {counts:?}");
    };
    // The second process's readiness names the partitions it holds (it notes a lease just
    // after taking it, so it may trail the locks for a moment).
    eventually(
        "the second process's readiness to name its share",
        || async {
            let (_, body) = readiness.check().await;
            let held = body["checks"]["projector_lag"]["detail"]["held_partitions"].clone();
            let held_second = held.as_array().map_or(0, Vec::len) as i64;
            Ok(split.contains(&held_second).then_some(()))
        },
    )
    .await?;
    publish_on_all(&h, &mut workloads, 300).await?;

    stop_second.cancel();
    tokio::time::timeout(Duration::from_secs(10), running).await???;
    held_as(
        h.pool(),
        "the first process to take every partition back",
        |c| c == [partitions],
    )
    .await?;
    let last = publish_on_all(&h, &mut workloads, 100).await?;
    every_checkpoint_at(h.pool(), last).await?;

    let fresh = fresh_fold(&h, last).await?;
    assert_same_read_models(h.pool(), &fresh.pool).await?;
    for workload in &workloads {
        assert_ledger_stored_once(h.pool(), &workload.ledger).await?;
    }
    Ok(())
}

/// Publishes one custom event for `account` on a legacy (pre-partition) subject.
async fn publish_legacy(h: &Harness, account: Uuid, name: &str) -> anyhow::Result<u64> {
    let player = Uuid::now_v7();
    let records = vec![logged::<CustomEvent>(&custom_event(player, name, "{}"))];
    let message = LogMessage::new(account, Utc::now(), CustomEvent::into_batch(records));
    let prefix = &h.config.common.event_log.subject_prefix;
    let subject = format!("{prefix}.ev.{account}.custom.{name}");
    h.publish_raw(subject, message.encode()).await
}

async fn events_of(pool: &PgPool, account: Uuid) -> anyhow::Result<i64> {
    Ok(
        sqlx::query_scalar("SELECT count(*) FROM events WHERE account_id = $1")
            .bind(account)
            .fetch_one(pool)
            .await?,
    )
}

#[tokio::test]
async fn legacy_messages_are_applied_by_their_accounts_partition_only() -> anyhow::Result<()> {
    let mut h = Harness::start().await?;
    let subjects = h.config.common.event_log.subjects();
    let accounts: Vec<Uuid> = (0..subjects.partitions())
        .filter_map(|k| {
            std::iter::repeat_with(Uuid::now_v7).find(|a| subjects.partition_of(*a) == k)
        })
        .collect();
    for round in 0..3 {
        for account in &accounts {
            publish_legacy(&h, *account, &format!("legacy_{round}")).await?;
        }
    }
    h.caught_up().await?;
    for account in &accounts {
        assert_eq!(events_of(h.pool(), *account).await?, 3, "{account}");
    }
    assert_eq!(crate::parking::parked(h.pool()).await?, []);

    // Every other partition reads the legacy messages again and leaves out the account's:
    // nothing of it comes back. Its own partition, from 0, applies them again.
    let account = accounts[3];
    let own = i32::from(subjects.partition_of(account));
    h.stop_projector().await?;
    sqlx::query("DELETE FROM events WHERE account_id = $1")
        .bind(account)
        .execute(h.pool())
        .await?;
    sqlx::query("UPDATE projection_checkpoints SET last_sequence = 0 WHERE log_partition <> $1")
        .bind(own)
        .execute(h.pool())
        .await?;
    h.start_projector().await?;
    let last = h.caught_up().await?;
    assert_eq!(events_of(h.pool(), account).await?, 0);
    assert_eq!(events_of(h.pool(), accounts[0]).await?, 3);

    h.stop_projector().await?;
    sqlx::query("UPDATE projection_checkpoints SET last_sequence = 0 WHERE log_partition = $1")
        .bind(own)
        .execute(h.pool())
        .await?;
    h.start_projector().await?;
    h.caught_up_to(last).await?;
    assert_eq!(events_of(h.pool(), account).await?, 3);
    Ok(())
}

#[tokio::test]
async fn checkpoints_of_the_pre_partition_version_are_where_every_partition_resumes()
-> anyhow::Result<()> {
    let mut h = Harness::start().await?;
    let mut workloads = one_per_partition(&h);
    publish_on_all(&h, &mut workloads, 300).await?;
    let last = h.caught_up().await?;
    h.stop_projector().await?;
    let before = events_checksum(h.pool()).await?;
    // The shape the pre-partition version left: one row per read model, partition -1.
    sqlx::query(
        "WITH old AS (DELETE FROM projection_checkpoints RETURNING projection, last_sequence)
         INSERT INTO projection_checkpoints (projection, log_partition, last_sequence, updated_at)
         SELECT projection, -1, min(last_sequence), now() FROM old GROUP BY projection",
    )
    .execute(h.pool())
    .await?;

    // Building the projector seeds the partitions (nothing consumes yet): each starts where
    // the old row stood.
    drop(Projector::build(&h.config).await?);
    let seeded: Vec<(i32, i64)> = sqlx::query_as(
        "SELECT log_partition, min(last_sequence) FROM projection_checkpoints GROUP BY 1",
    )
    .fetch_all(h.pool())
    .await?;
    assert!(
        seeded.iter().all(|(k, at)| *k >= 0 && *at == last as i64),
        "{seeded:?}"
    );
    h.start_projector().await?;
    let (account, player) = (Uuid::now_v7(), Uuid::now_v7());
    let marker = h
        .publish(
            account,
            Utc::now(),
            vec![logged::<CustomEvent>(&custom_event(player, "marker", "{}"))],
        )
        .await?;
    assert_eq!(marker, last + 1);
    h.caught_up_to(marker).await?;
    let rows: Vec<(i32, i64)> = sqlx::query_as(
        "SELECT log_partition, count(*) FROM projection_checkpoints GROUP BY 1 ORDER BY 1",
    )
    .fetch_all(h.pool())
    .await?;
    let partitions = usize::from(h.config.common.event_log.subjects().partitions());
    let models = projector::projections::READ_MODELS.len() as i64;
    assert_eq!(rows.len(), partitions, "no row of -1 left: {rows:?}");
    assert!(
        rows.iter().all(|(k, n)| *k >= 0 && *n >= models),
        "{rows:?}"
    );
    // Nothing before the marker was written again (the digest covers each row's xmin).
    sqlx::query("DELETE FROM events WHERE account_id = $1")
        .bind(account)
        .execute(h.pool())
        .await?;
    assert_eq!(events_checksum(h.pool()).await?, before);
    Ok(())
}

#[tokio::test]
async fn a_pre_partition_projector_holding_the_stream_keeps_this_version_waiting()
-> anyhow::Result<()> {
    let mut h = Harness::start().await?;
    h.stop_projector().await?;
    let stream = h.config.common.event_log.stream.clone();
    let mut old = sqlx::PgConnection::connect(&h.db.url).await?;
    let locked: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock(hashtext($1))")
        .bind(format!("warden-projector:{stream}"))
        .fetch_one(&mut old)
        .await?;
    assert!(locked);
    h.start_projector().await?;
    let (account, player) = (Uuid::now_v7(), Uuid::now_v7());
    let sequence = h
        .publish(
            account,
            Utc::now(),
            vec![logged::<CustomEvent>(&custom_event(player, "waits", "{}"))],
        )
        .await?;
    // Several claim polls (one a second) pass without a partition taken or anything applied.
    let readiness = h.readiness.clone().expect("a running projector");
    let watched = Instant::now();
    while watched.elapsed() < Duration::from_secs(3) {
        let (_, body) = readiness.check().await;
        let detail = &body["checks"]["projector_lag"]["detail"];
        assert_eq!(detail["role"], "standby", "{body}");
        assert_eq!(crate::leadership::holders(h.pool()).await?, []);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(events_of(h.pool(), account).await?, 0);

    old.close().await?;
    h.caught_up_to(sequence).await?;
    eventually("the event to be applied", || async {
        Ok((events_of(h.pool(), account).await? == 1).then_some(()))
    })
    .await
}
