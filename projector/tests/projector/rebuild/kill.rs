//! A `projector rebuild` process SIGKILLed in each phase leaves the live tables,
//! their checkpoints, persistence and indexes as the live projector left them, and the next
//! rebuild drops what it left behind and swaps in a fresh fold.
//!
//! Each kill lands in its phase by locks, not by timing: a transaction of the test holds a
//! lock that phase must wait on, and the process is killed once PostgreSQL shows one of its
//! statements waiting on it.

use super::process::{Holder, RebuildProcess, connections_gone, only_chat_unlogged};
use super::{fold_again, live_caught_up};
use crate::harness::{Harness, eventually, table_checksum};
use crate::workload::{Workload, assert_same_read_models, every_checkpoint_at};
use projector::rebuild::{RebuildOptions, rebuild};
use tokio_util::sync::CancellationToken;

/// The backlog under rebuild: ~115 log messages, a few chunks of the child's replay each, so
/// a lock the test takes once the load has begun still finds most of it unapplied.
const RECORDS: usize = 5_000;

/// Consumer chunks of 64 messages: the rebuild cuts the backlog (mostly in one partition) into
/// two chunks, so while the test holds the chat model's load the other models, which run at
/// most three chunks ahead of it, load everything (and their tables are indexed during the
/// load), and the chat model's has not finished.
const CHUNKING: [(&str, &str); 1] = [("PROJECTOR_BATCH_MAX", "64")];

/// Where the rebuild is killed.
#[derive(Debug, Clone, Copy)]
enum Kill {
    Prepare,
    Load,
    IndexBuild,
    CatchUp,
    Swap,
}

/// What the live side looks like: every table's rows with their versions, the checkpoints,
/// and every table's persistence and indexes.
#[derive(Debug, PartialEq)]
struct Live {
    tables: Vec<(&'static str, (i64, String))>,
    checkpoints: Vec<(String, i32, i64)>,
    /// `(table, relpersistence, index definitions)`.
    shape: Vec<(&'static str, String, Vec<String>)>,
}

impl Live {
    async fn read(h: &Harness) -> anyhow::Result<Live> {
        let mut tables = Vec::new();
        let mut shape = Vec::new();
        for table in projector::projections::tables().chain(["projection_checkpoints"]) {
            tables.push((table, table_checksum(h.pool(), table).await?));
            let (persistence, indexes): (String, Vec<String>) = sqlx::query_as(
                "SELECT c.relpersistence::text,
                        coalesce(array_agg(pg_get_indexdef(i.indexrelid)
                                 ORDER BY pg_get_indexdef(i.indexrelid))
                                 FILTER (WHERE i.indexrelid IS NOT NULL), '{}')
                 FROM pg_class c LEFT JOIN pg_index i ON i.indrelid = c.oid
                 WHERE c.oid = $1::regclass
                 GROUP BY c.relpersistence",
            )
            .bind(format!("public.{table}"))
            .fetch_one(h.pool())
            .await?;
            shape.push((table, persistence, indexes));
        }
        let checkpoints = sqlx::query_as(
            "SELECT projection, log_partition, last_sequence FROM projection_checkpoints
             ORDER BY 1, 2",
        )
        .fetch_all(h.pool())
        .await?;
        Ok(Live {
            tables,
            checkpoints,
            shape,
        })
    }
}

impl Live {
    /// What differs in `other`, for a failure message.
    fn differences(&self, other: &Live) -> String {
        let mut differ: Vec<String> = self
            .tables
            .iter()
            .zip(&other.tables)
            .filter(|(a, b)| a != b)
            .map(|(a, b)| format!("{} {:?} -> {:?}", a.0, a.1, b.1))
            .collect();
        if self.checkpoints != other.checkpoints {
            differ.push(format!(
                "checkpoints {:?} -> {:?}",
                self.checkpoints, other.checkpoints
            ));
        }
        if self.shape != other.shape {
            differ.push(format!("shape {:?} -> {:?}", self.shape, other.shape));
        }
        differ.join("; ")
    }
}

/// Waits until the live projector has applied the whole log and moved every checkpoint it
/// will: each at the stream's end (an idle partition's follow the end every 250 ms, so they
/// may still move once every partition has reached its head).
async fn live_settled(h: &Harness) -> anyhow::Result<()> {
    live_caught_up(h).await?;
    let mut stream = h.js.get_stream(&h.config.common.event_log.stream).await?;
    let end = stream.info().await?.state.last_sequence;
    every_checkpoint_at(h.pool(), end).await
}

/// The lock a phase waits on that must be held before the process starts.
async fn hold_early(h: &Harness, kill: Kill) -> anyhow::Result<Option<Holder>> {
    Ok(match kill {
        // Copying a live table's definition waits on its ACCESS EXCLUSIVE lock (no live
        // write waits on it meanwhile: nothing new is published).
        Kill::Prepare => Some(
            Holder::hold(
                h,
                "LOCK TABLE public.chat_messages IN ACCESS EXCLUSIVE MODE",
            )
            .await?,
        ),
        // The swap locks every live checkpoint row.
        Kill::Swap => Some(
            Holder::hold(
                h,
                "SELECT 1 FROM public.projection_checkpoints
                 WHERE projection = 'players' FOR UPDATE",
            )
            .await?,
        ),
        Kill::Load | Kill::IndexBuild | Kill::CatchUp => None,
    })
}

/// Drives the rebuild process into `kill`'s phase and holds it there; returns every holder
/// (released after the kill) and what the live side must look like after the kill: `before`,
/// or what the live projector made of what was published meanwhile.
async fn into_phase(
    h: &Harness,
    workload: &mut Workload,
    kill: Kill,
    child: &mut RebuildProcess,
    early: Option<Holder>,
    before: Live,
) -> anyhow::Result<(Vec<Holder>, Live)> {
    if let Some(early) = early {
        match kill {
            Kill::Prepare => early.blocks(h, "%CREATE%TABLE%").await?,
            _ => {
                child.phase("swap").await?;
                early
                    .blocks(h, "%projection_checkpoints%FOR UPDATE%")
                    .await?
            }
        };
        return Ok((vec![early], before));
    }
    let mut chat = Holder::begin(h).await?;
    child.phase("load").await?;
    let schema = chat.copy_schema().await?;
    if let Kill::Load = kill {
        // SHARE conflicts with the load's writes: the chat model's load waits from here.
        chat.lock(&format!("LOCK TABLE {schema}.chat_messages IN SHARE MODE"))
            .await?;
        chat.blocks(h, "%chat_messages%").await?;
        // The other models carry on: the load has started, and the chat model's has not
        // finished.
        let copy = |model: &'static str| {
            let schema = schema.clone();
            async move {
                let at: Option<i64> = sqlx::query_scalar(&format!(
                    "SELECT max(last_sequence) FROM {schema}.projection_checkpoints
                     WHERE projection {model}"
                ))
                .fetch_one(h.pool())
                .await?;
                anyhow::Ok(at.unwrap_or(0))
            }
        };
        eventually("another model of the copy to move", || async {
            Ok((copy("<> 'chat'").await? > 0).then_some(()))
        })
        .await?;
        let live: Option<i64> = sqlx::query_scalar(
            "SELECT max(last_sequence) FROM projection_checkpoints WHERE projection = 'chat'",
        )
        .fetch_one(h.pool())
        .await?;
        let (copied, live) = (copy("= 'chat'").await?, live.unwrap_or(0));
        anyhow::ensure!(copied < live, "chat's load finished: {copied} of {live}");
        // The index build starts beside the load: the tables of models that have loaded
        // everything are made logged while the chat model's load still waits here (so the
        // load phase cannot have ended).
        eventually(
            "a loaded model's table to be logged during the load",
            || async {
                let logged: Vec<String> = sqlx::query_scalar(
                    "SELECT c.relname::text FROM pg_class c
                 JOIN pg_namespace n ON n.oid = c.relnamespace
                 WHERE n.nspname = $1 AND c.relkind = 'r' AND c.relpersistence = 'p'",
                )
                .bind(&schema)
                .fetch_all(h.pool())
                .await?;
                anyhow::ensure!(
                    !logged.iter().any(|t| t == "chat_messages"),
                    "chat_messages was made logged while its load waited"
                );
                Ok((!logged.is_empty()).then_some(()))
            },
        )
        .await?;
        return Ok((vec![chat], before));
    }
    // ROW EXCLUSIVE lets the load write, but not the index build make the table logged (the
    // phase's first step) or build its indexes.
    chat.lock(&format!(
        "LOCK TABLE {schema}.chat_messages IN ROW EXCLUSIVE MODE"
    ))
    .await?;
    child.phase("index_build").await?;
    chat.blocks(h, "%chat_messages%").await?;
    // The phase's other statements carry on: every other table of the copy is made logged.
    only_chat_unlogged(h, &schema).await?;
    if let Kill::IndexBuild = kill {
        // A table's indexes are built as soon as it is logged: a second transaction of the
        // test asks for chat_messages behind the wait to make it logged, so it holds the
        // table from the moment that is done, and the table's first index waits on it.
        let queued = Holder::begin(h)
            .await?
            .lock_queued(
                h,
                &format!("LOCK TABLE {schema}.chat_messages IN ROW EXCLUSIVE MODE"),
            )
            .await?;
        chat.release().await?;
        let indexed = queued.await??;
        indexed.blocks(h, "%CREATE%INDEX%").await?;
        return Ok((vec![indexed], before));
    }
    // Every model's transaction on the copy locks its checkpoint row first: the catch-up
    // waits on these (the index build does not touch them).
    let checkpoints = Holder::hold(
        h,
        &format!("SELECT 1 FROM {schema}.projection_checkpoints FOR UPDATE"),
    )
    .await?;
    // What the catch-up is to replay: applied live meanwhile.
    workload.publish_records(h, 500).await?;
    live_settled(h).await?;
    let during = Live::read(h).await?;
    anyhow::ensure!(during != before, "the live projector applied nothing more");
    chat.release().await?;
    child.phase("catch_up").await?;
    checkpoints
        .blocks(h, "%projection_checkpoints%FOR UPDATE%")
        .await?;
    Ok((vec![checkpoints], during))
}

/// Kills a rebuild in `kill`'s phase and checks the live side, then rebuilds again.
async fn a_rebuild_killed_in(kill: Kill) -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let mut workload = Workload::new();
    workload.publish_records(&h, RECORDS).await?;
    live_settled(&h).await?;
    let before = Live::read(&h).await?;

    let early = hold_early(&h, kill).await?;
    let mut child = RebuildProcess::spawn_with(&h, &CHUNKING)?;
    let (holders, expected) =
        into_phase(&h, &mut workload, kill, &mut child, early, before).await?;
    child.kill()?;
    for holder in holders {
        holder.release().await?;
    }
    connections_gone(&h).await?;

    let after = Live::read(&h).await?;
    assert!(
        after == expected,
        "the live side after a kill in {kill:?} differs: {}",
        expected.differences(&after)
    );
    for (table, persistence, indexes) in &after.shape {
        assert_eq!(persistence, "p", "{table} is not a permanent table");
        assert!(!indexes.is_empty(), "{table} has no index");
    }

    // What the killed one left: its copy, once it had committed one (after preparing).
    let copies: i64 =
        sqlx::query_scalar("SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'rebuild\\_%'")
            .fetch_one(h.pool())
            .await?;
    let left = if let Kill::Prepare = kill { 0 } else { 1 };
    assert_eq!(copies, left, "copies left by a kill in {kill:?}");

    // The next rebuild drops what the killed one left and swaps in a fresh fold.
    rebuild(
        &h.config,
        &RebuildOptions::default(),
        CancellationToken::new(),
    )
    .await?;
    assert_eq!(
        super::leftover_schemas(h.pool()).await?,
        0,
        "schemas left behind"
    );
    live_caught_up(&h).await?;
    let clean = fold_again(&h).await?;
    assert_same_read_models(h.pool(), &clean.pool).await?;
    let shape = Live::read(&h).await?.shape;
    assert_eq!(
        shape, after.shape,
        "the rebuilt tables' persistence and indexes"
    );
    Ok(())
}

#[tokio::test]
async fn a_rebuild_killed_while_preparing_leaves_the_live_tables_untouched() -> anyhow::Result<()> {
    a_rebuild_killed_in(Kill::Prepare).await
}

#[tokio::test]
async fn a_rebuild_killed_while_loading_leaves_the_live_tables_untouched() -> anyhow::Result<()> {
    a_rebuild_killed_in(Kill::Load).await
}

#[tokio::test]
async fn a_rebuild_killed_while_building_indexes_leaves_the_live_tables_untouched()
-> anyhow::Result<()> {
    a_rebuild_killed_in(Kill::IndexBuild).await
}

#[tokio::test]
async fn a_rebuild_killed_while_catching_up_leaves_the_live_tables_untouched() -> anyhow::Result<()>
{
    a_rebuild_killed_in(Kill::CatchUp).await
}

#[tokio::test]
async fn a_rebuild_killed_while_swapping_leaves_the_live_tables_untouched() -> anyhow::Result<()> {
    a_rebuild_killed_in(Kill::Swap).await
}
