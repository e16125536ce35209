//! A read model behind the others in a rebuild's load applies the chunks waiting for it in one
//! transaction, and the copy still ends as the live fold: the chat model's table is held by
//! the test while the load goes on, so the other models commit the next chunks and those wait
//! in the chat model's queue.

use super::live_caught_up;
use super::process::{Holder, RebuildProcess};
use crate::harness::Harness;
use crate::workload::{Workload, contents};
use serde_json::Value;

/// Records of the backlog: about 64 log messages, so chunks of 8 messages make 8 or so.
const RECORDS: usize = 3_000;

/// A model's transaction on the copy, from the rebuild's debug line: `(last sequence, chunks)`.
fn committed(line: &Value, model: &str) -> Option<(u64, u64)> {
    (line["message"] == "read model transaction committed" && line["projection"] == model)
        .then(|| (line["last_sequence"].as_u64(), line["chunks"].as_u64()))
        .and_then(|(sequence, chunks)| sequence.zip(chunks))
}

#[tokio::test]
async fn a_model_behind_the_others_applies_the_chunks_waiting_for_it_in_one_transaction()
-> anyhow::Result<()> {
    let h = Harness::start().await?;
    let mut workload = Workload::new();
    workload.publish_records(&h, RECORDS).await?;
    live_caught_up(&h).await?;
    let live = contents(h.pool()).await?;

    let mut chat = Holder::begin(&h).await?;
    let settings = [
        ("PROJECTOR_BATCH_MAX", "4"),
        ("PROJECTOR_REBUILD_CHUNK_MESSAGES", "8"),
        // Each model's commit, with the chunks it applied.
        ("RUST_LOG", "info,projector::projections::apply=debug"),
    ];
    let mut child = RebuildProcess::spawn_with(&h, &settings)?;
    child.phase("load").await?;
    let schema = chat.copy_schema().await?;
    // SHARE conflicts with the load's writes: the chat model's transaction waits from here.
    chat.lock(&format!("LOCK TABLE {schema}.chat_messages IN SHARE MODE"))
        .await?;
    chat.blocks(&h, "%chat_messages%").await?;
    let held_at: Option<i64> = sqlx::query_scalar(&format!(
        "SELECT last_sequence FROM {schema}.projection_checkpoints WHERE projection = 'chat'"
    ))
    .fetch_optional(h.pool())
    .await?;
    let held_at = held_at.unwrap_or(0) as u64;
    // Another model commits three chunks past where the chat model stands: the chat model's
    // transaction holds one to three of them (it takes what waits for it when it gets a slot),
    // and the others were dealt to every model, so they wait in its queue. Either way it
    // applies two or more in one transaction.
    let mut past = 0;
    child
        .until(
            "the players model three chunks past the chat model",
            |line| {
                let (sequence, chunks) = committed(line, "players")?;
                if sequence > held_at {
                    past += chunks;
                }
                (past >= 3).then_some(())
            },
        )
        .await?;
    chat.release().await?;
    let transactions = child
        .until("the rebuild to finish", |line| {
            (line["message"] == "rebuild finished").then(|| line["transactions"].clone())
        })
        .await?;
    child.finished()?;
    // `["players=6/8", "chat=3/8", ...]`: each model's transactions over its chunks.
    let listed = transactions.as_str().unwrap_or_default();
    let chat_counts = listed
        .split('"')
        .find_map(|entry| entry.strip_prefix("chat="))
        .and_then(|counts| counts.split_once('/'))
        .and_then(|(t, c)| Some((t.parse::<u64>().ok()?, c.parse::<u64>().ok()?)));
    let Some((transactions, chunks)) = chat_counts else {
        anyhow::bail!("no chat transactions in {listed}");
    };
    assert!(
        transactions < chunks,
        "the chat model: {transactions} transactions over {chunks} chunks"
    );

    let rebuilt = contents(h.pool()).await?;
    for (live, rebuilt) in live.iter().zip(&rebuilt) {
        assert!(
            live == rebuilt,
            "{} differs: {} rows live, {} rebuilt",
            live.0,
            live.1,
            rebuilt.1
        );
    }
    Ok(())
}
