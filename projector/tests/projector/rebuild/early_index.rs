//! The index build that starts during the load never holds the rest back: a statement of it
//! that waits on another transaction's lock (here the chat table's `SET LOGGED`, held back by
//! the test) lets every other table be made logged and indexed once the load ends. Before,
//! reading the tables' sizes at the load's end waited behind that statement, and the whole
//! index build with it.

use super::live_caught_up;
use super::process::{Holder, RebuildProcess, only_chat_unlogged};
use crate::harness::Harness;
use crate::workload::{Workload, contents};

#[tokio::test]
async fn a_table_held_during_the_early_index_build_holds_back_no_other() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let mut workload = Workload::new();
    workload.publish_records(&h, 5_000).await?;
    live_caught_up(&h).await?;
    let live = contents(h.pool()).await?;

    let (mut players, mut chat) = (Holder::begin(&h).await?, Holder::begin(&h).await?);
    let mut child = RebuildProcess::spawn(&h)?;
    child.phase("load").await?;
    let schema = players.copy_schema().await?;
    // SHARE conflicts with the players model's writes: the load cannot end.
    players
        .lock(&format!("LOCK TABLE {schema}.players IN SHARE MODE"))
        .await?;
    // ROW EXCLUSIVE lets the chat model load, but not its table be made logged.
    chat.lock(&format!(
        "LOCK TABLE {schema}.chat_messages IN ROW EXCLUSIVE MODE"
    ))
    .await?;
    players.blocks(&h, "%players%").await?;
    // The chat model loads everything; its table's index build starts beside the load.
    chat.blocks(&h, "%chat_messages%SET LOGGED%").await?;
    players.release().await?;
    child.phase("index_build").await?;
    only_chat_unlogged(&h, &schema).await?;
    chat.release().await?;
    child
        .until("the rebuild to finish", |line| {
            (line["message"] == "rebuild finished").then_some(())
        })
        .await?;
    child.finished()?;
    let rebuilt = contents(h.pool()).await?;
    for (live, rebuilt) in live.iter().zip(&rebuilt) {
        assert!(live == rebuilt, "{} differs after the rebuild", live.0);
    }
    Ok(())
}
