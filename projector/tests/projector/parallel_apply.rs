//! Parallel apply: every read model applies a chunk in its own transaction with its
//! own checkpoint. An outage in one model's transaction leaves the others ahead, and the next
//! pass brings it up without doubling anything; the erasure scrub waits for the models it
//! scrubs to commit the same chunk.

use crate::harness::{Harness, eventually, table_checksum};
use crate::parking::chat;
use crate::workload::{
    Workload, assert_ledger_stored_once, assert_same_read_models, checkpoints, checkpoints_in,
    every_checkpoint_at, fresh_fold,
};
use chrono::Utc;
use shared::envelope::{LogMessage, Logged};
use shared::records::PlayerErasure;
use std::time::Duration;
use uuid::Uuid;

#[tokio::test]
async fn an_outage_in_one_model_leaves_the_others_ahead_and_the_next_pass_doubles_nothing()
-> anyhow::Result<()> {
    // A long batch wait gathers each retry's backlog into one chunk.
    let h = Harness::start_with(|config| config.batch_wait = Duration::from_millis(300)).await?;
    let mut workload = Workload::new();
    let first = workload.publish_records(&h, 1_000).await?;
    h.caught_up_to(first).await?;

    // Every write of the chat model fails while its table is away: an outage of that model
    // only (undefined table is retried, never parked).
    sqlx::query("ALTER TABLE chat_messages RENAME TO chat_messages_away")
        .execute(h.pool())
        .await?;
    let last = workload.publish_records(&h, 1_000).await?;
    // Chat failed; the erasure scrub depends on chat, so it does not run either.
    // (In the account's partition: the others have no message of it.)
    let partition = workload.partition(&h);
    let held_back = |model: &str| matches!(model, "chat" | "erasure");
    eventually("the other models to reach the end without chat", || async {
        let at = checkpoints_in(h.pool(), partition).await?;
        let others_done = at
            .iter()
            .all(|(model, at)| held_back(model) || *at >= last as i64);
        Ok(others_done.then_some(()))
    })
    .await?;
    let ahead = checkpoints_in(h.pool(), partition).await?;
    for (model, at) in &ahead {
        let expected = if held_back(model) { first } else { last };
        assert_eq!(*at, expected as i64, "{model}: {ahead:?}");
    }
    // Retried passes resume after chat's checkpoint: the models ahead skip what they hold, so
    // the timeline's rows are not even rewritten (same versions).
    let events_ahead = table_checksum(h.pool(), "events").await?;

    sqlx::query("ALTER TABLE chat_messages_away RENAME TO chat_messages")
        .execute(h.pool())
        .await?;
    every_checkpoint_at(h.pool(), last).await?;
    for (model, at) in checkpoints(h.pool()).await? {
        assert_eq!(at, last as i64, "{model}'s checkpoint");
    }
    assert_eq!(table_checksum(h.pool(), "events").await?, events_ahead);
    assert_ledger_stored_once(h.pool(), &workload.ledger).await?;
    let clean = fresh_fold(&h, last).await?;
    assert_same_read_models(h.pool(), &clean.pool).await?;
    Ok(())
}

#[tokio::test]
async fn the_erasure_scrub_waits_for_the_models_it_scrubs_on_the_same_chunk() -> anyhow::Result<()>
{
    let mut h =
        Harness::start_with(|config| config.batch_wait = Duration::from_millis(500)).await?;
    h.stop_projector().await?;
    // The chat model is slow: were the scrub not to wait for it, its DELETE would run before
    // the line commits, see nothing, and leave the erased player's line behind.
    sqlx::raw_sql(
        "CREATE FUNCTION slow_chat() RETURNS trigger LANGUAGE plpgsql AS
             $$ BEGIN PERFORM pg_sleep(1); RETURN NULL; END $$;
         CREATE TRIGGER slow_chat BEFORE INSERT ON chat_messages
             FOR EACH STATEMENT EXECUTE FUNCTION slow_chat();",
    )
    .execute(h.pool())
    .await?;
    let (account, server, erased, kept) = (
        Uuid::now_v7(),
        Uuid::now_v7(),
        Uuid::now_v7(),
        Uuid::now_v7(),
    );
    let said = h
        .publish(
            account,
            Utc::now(),
            vec![
                chat(server, erased, "erase me"),
                chat(server, kept, "keep me"),
            ],
        )
        .await?;
    let erasure = LogMessage::new(
        account,
        Utc::now(),
        PlayerErasure::into_batch(vec![Logged {
            id: Uuid::now_v7(),
            record: PlayerErasure {
                player_uuid: erased,
                erased_at: Utc::now(),
                by: "admin".into(),
            },
        }]),
    );
    let subjects = h.config.common.event_log.subjects();
    let erased_at = h
        .publish_raw(
            subjects.for_records(account, PlayerErasure::KIND, None),
            erasure.encode(),
        )
        .await?;
    assert_eq!(erased_at, said + 1);
    h.start_projector().await?;
    h.caught_up_to(erased_at).await?;

    let lines: Vec<String> =
        sqlx::query_scalar("SELECT message FROM chat_messages WHERE account_id = $1")
            .bind(account)
            .fetch_all(h.pool())
            .await?;
    assert_eq!(lines, ["keep me"]);
    Ok(())
}
