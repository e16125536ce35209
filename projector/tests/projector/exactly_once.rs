//! Every record is applied once: duplicates, restarts and replays change nothing.

use crate::harness::{Harness, checkpoint, custom_event, events_checksum, logged, logged_as};
use chrono::Utc;
use shared::records::{ChatEntry, CustomEvent};
use uuid::Uuid;

async fn publish_some(h: &Harness, account: Uuid, player: Uuid) -> anyhow::Result<()> {
    for i in 0..5 {
        let events = (0..20)
            .map(|j| {
                logged::<CustomEvent>(&custom_event(
                    player,
                    "level_up",
                    &format!(r#"{{"i":{i},"j":{j}}}"#),
                ))
            })
            .collect();
        h.publish(account, Utc::now(), events).await?;
    }
    let server = Uuid::now_v7();
    let chat = logged::<ChatEntry>(&format!(
        r#"{{"server_id":"{server}","player_uuid":"{player}","entry_type":"chat","message":"hi"}}"#
    ));
    h.publish(account, Utc::now(), vec![chat]).await?;
    Ok(())
}

#[tokio::test]
async fn a_duplicate_id_is_stored_once_as_first_logged() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let (account, player, id) = (Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7());
    let first = logged_as::<CustomEvent>(id, &custom_event(player, "vote", r#"{"copy":1}"#));
    let retry = logged_as::<CustomEvent>(id, &custom_event(player, "vote", r#"{"copy":2}"#));
    h.publish(account, Utc::now(), vec![first]).await?;
    h.publish(account, Utc::now(), vec![retry]).await?;
    // The same id twice inside one message, too (one INSERT statement sees both).
    let twice = Uuid::now_v7();
    let copies = [r#"{"copy":1}"#, r#"{"copy":2}"#]
        .map(|p| logged_as::<CustomEvent>(twice, &custom_event(player, "vote", p)));
    h.publish(account, Utc::now(), copies.to_vec()).await?;
    h.caught_up().await?;

    let stored_twice: Vec<String> =
        sqlx::query_scalar("SELECT properties::text FROM events WHERE account_id = $1 AND id = $2")
            .bind(account)
            .bind(twice)
            .fetch_all(h.pool())
            .await?;
    assert_eq!(stored_twice, [r#"{"copy":1}"#]);

    let stored: Vec<String> =
        sqlx::query_scalar("SELECT properties::text FROM events WHERE account_id = $1 AND id = $2")
            .bind(account)
            .bind(id)
            .fetch_all(h.pool())
            .await?;
    assert_eq!(stored, [r#"{"copy":1}"#]);
    Ok(())
}

#[tokio::test]
async fn restarting_the_projector_changes_nothing() -> anyhow::Result<()> {
    let mut h = Harness::start().await?;
    let (account, player) = (Uuid::now_v7(), Uuid::now_v7());
    publish_some(&h, account, player).await?;
    let last = h.caught_up().await?;
    let before = events_checksum(h.pool()).await?;
    assert_eq!(before.0, 101);

    h.stop_projector().await?;
    h.start_projector().await?;
    // Something new after the restart proves the new projector is running past the old data.
    let marker = h
        .publish(
            account,
            Utc::now(),
            vec![logged::<CustomEvent>(&custom_event(player, "marker", "{}"))],
        )
        .await?;
    assert_eq!(marker, last + 1);
    h.caught_up_to(marker).await?;

    let after: (i64, String) = sqlx::query_as(
        "SELECT count(*), coalesce(md5(string_agg(concat_ws('|', xmin::text, ctid::text, account_id,
                id, seq, name, is_internal, player_uuid, server_id, properties::text, occurred_at,
                received_at), E'\\n' ORDER BY account_id, id)), '')
         FROM events WHERE name <> 'marker'",
    )
    .fetch_one(h.pool())
    .await?;
    assert_eq!(after, before);
    Ok(())
}

#[tokio::test]
async fn replaying_from_zero_leaves_the_table_byte_identical() -> anyhow::Result<()> {
    let mut h = Harness::start().await?;
    let (account, player) = (Uuid::now_v7(), Uuid::now_v7());
    publish_some(&h, account, player).await?;
    h.publish_raw(
        // A legacy-form subject naming no account: partition 0's reader parks it.
        format!("{}.ev.junk", h.config.common.event_log.subject_prefix),
        b"not a log message".to_vec(),
    )
    .await?;
    let last = h.caught_up().await?;
    let before = events_checksum(h.pool()).await?;
    let parked_before: i64 = sqlx::query_scalar("SELECT count(*) FROM parked_messages")
        .fetch_one(h.pool())
        .await?;

    h.stop_projector().await?;
    sqlx::query("UPDATE projection_checkpoints SET last_sequence = 0")
        .execute(h.pool())
        .await?;
    assert_eq!(checkpoint(h.pool()).await?, 0);
    h.start_projector().await?;
    h.caught_up_to(last).await?;

    assert_eq!(events_checksum(h.pool()).await?, before);
    let parked_after: i64 = sqlx::query_scalar("SELECT count(*) FROM parked_messages")
        .fetch_one(h.pool())
        .await?;
    assert_eq!((parked_before, parked_after), (1, 1));
    Ok(())
}

/// The read models commit asynchronously: a PostgreSQL crash can lose a model's last commit,
/// its rows and its checkpoint together. A consumer that carried on from where it was would
/// apply its next chunk past the gap and skip the lost messages for good; it must resume from
/// the checkpoint instead and apply them again.
#[tokio::test]
async fn a_lost_commit_is_applied_again_not_skipped() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let (account, player) = (Uuid::now_v7(), Uuid::now_v7());
    let partition = h.config.common.event_log.subjects().partition_of(account);
    let step = |n: u32| {
        vec![logged::<CustomEvent>(&custom_event(
            player,
            "step",
            &format!(r#"{{"n":{n}}}"#),
        ))]
    };
    h.publish(account, Utc::now(), step(1)).await?;
    let second = h.publish(account, Utc::now(), step(2)).await?;
    h.caught_up().await?;

    // What a lost commit of the timeline's chunk holding step 2 leaves behind.
    let mut tx = h.pool().begin().await?;
    sqlx::query("DELETE FROM events WHERE account_id = $1 AND properties->>'n' = '2'")
        .bind(account)
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "UPDATE projection_checkpoints SET last_sequence = $1
         WHERE projection = 'timeline' AND log_partition = $2",
    )
    .bind(second as i64 - 1)
    .bind(i32::from(partition))
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;

    h.publish(account, Utc::now(), step(3)).await?;
    h.caught_up().await?;
    let steps: Vec<String> = sqlx::query_scalar(
        "SELECT properties->>'n' FROM events WHERE account_id = $1 ORDER BY seq",
    )
    .bind(account)
    .fetch_all(h.pool())
    .await?;
    assert_eq!(steps, ["1", "2", "3"], "step 2 was lost with the commit");
    Ok(())
}
