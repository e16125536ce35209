//! Crash safety: a projector process SIGKILLed at random moments of a catch-up, and
//! a storm of consumer restarts over slow commits, both end with read models equal to one
//! clean fold of the stream and every checkpoint at the stream's end.

use crate::harness::{DEADLINE, Harness, eventually};
use crate::leadership::holders;
use crate::workload::{
    Workload, assert_ledger_stored_once, assert_same_read_models, checkpoints, checkpoints_in,
    every_checkpoint_at, fresh_fold,
};
use projector::Projector;
use std::collections::BTreeSet;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The backlog the killed projectors catch up on.
const BACKLOG_RECORDS: usize = 20_000;
/// Kills that must land while the backlog is still being applied.
const MIN_KILLS_DURING_CATCH_UP: usize = 4;
/// How long the kills may go on before one last process finishes the catch-up (once enough
/// landed during it). On a loaded machine start-up takes most of each process's short life,
/// each applies a chunk or two, and kills alone would not get through the backlog in time.
const KILLING_FOR: Duration = Duration::from_secs(30);

/// A tiny deterministic generator (xorshift), seeded per run and printed on failure.
struct Dice(u64);

impl Dice {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Starts the projector binary on the harness's stream and database.
pub(crate) fn spawn_projector(h: &Harness) -> anyhow::Result<Child> {
    Ok(projector_command(h).spawn()?)
}

/// The projector binary on the harness's stream and database, in small chunks.
pub(crate) fn projector_command(h: &Harness) -> Command {
    let log = &h.config.common.event_log;
    let output = || {
        if std::env::var_os("TEST_LOG").is_some() {
            Stdio::inherit()
        } else {
            Stdio::null()
        }
    };
    let mut command = Command::new(env!("CARGO_BIN_EXE_projector"));
    command
        .env("DATABASE_URL", h.config.database_url.expose())
        .env("NATS_URL", h.config.common.nats_url.expose())
        .env("EVENT_STREAM", &log.stream)
        .env("SUBJECT_PREFIX", &log.subject_prefix)
        // The same privacy buckets and master key as the harness (the log may hold sealed
        // fields).
        .env("PRIVACY_BUCKET", &log.privacy_bucket)
        .env(
            "PRIVACY_MASTER_KEY",
            h.vars.get("PRIVACY_MASTER_KEY").unwrap_or_default(),
        )
        // The projector serves no API and must start without the operator's key.
        .env_remove("ADMIN_KEY")
        .env("BIND_ADDR", "127.0.0.1:0")
        // Small chunks: many commits, so kills land mid-chunk and between commits alike.
        .env("PROJECTOR_BATCH_MAX", "4")
        .env("PROJECTOR_BATCH_WAIT_MS", "2")
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(output())
        .stderr(output());
    command
}

pub(crate) fn sigkill(mut child: Child) -> anyhow::Result<()> {
    // Child::kill sends SIGKILL on Unix.
    child.kill()?;
    child.wait()?;
    Ok(())
}

/// Waits until a projector process not in `seen` holds partitions, and adds it.
async fn new_holder(h: &Harness, seen: &mut BTreeSet<String>) -> anyhow::Result<()> {
    let name = eventually("the new process to hold partitions", || async {
        let holders = holders(h.pool()).await?;
        Ok(holders
            .into_iter()
            .map(|(name, _)| name)
            .find(|name| !seen.contains(name)))
    })
    .await?;
    seen.insert(name);
    Ok(())
}

/// Where the backlog's partition stands: its lowest and highest read model's checkpoints (the
/// other partitions hold no message; their checkpoints only follow the stream's end once a
/// process has been idle there).
async fn standing(h: &Harness, partition: u16) -> anyhow::Result<(i64, i64)> {
    let at: Vec<i64> = checkpoints_in(h.pool(), partition)
        .await?
        .into_iter()
        .map(|(_, last)| last)
        .collect();
    let lowest = at.iter().copied().min().unwrap_or(0);
    Ok((lowest, at.into_iter().max().unwrap_or(0)))
}

#[tokio::test]
async fn a_projector_killed_at_random_moments_ends_equal_to_a_fresh_fold() -> anyhow::Result<()> {
    let mut h = Harness::start().await?;
    h.stop_projector().await?;
    let mut workload = Workload::new();
    let last = workload.publish_records(&h, BACKLOG_RECORDS).await?;
    let partition = workload.partition(&h);
    let seed = u64::from(std::process::id()) << 20
        | u64::from(Instant::now().elapsed().subsec_nanos())
        | 1;
    let mut dice = Dice(seed);

    let started = Instant::now();
    let (mut kills, mut during_catch_up, mut positions) = (0, 0, Vec::new());
    // Processes seen holding partitions (by their lease sessions' name).
    let mut seen = BTreeSet::new();
    loop {
        let child = spawn_projector(&h)?;
        // The moment of the kill is the point of the test: anywhere from start-up to mid-chunk.
        // On a loaded machine start-up alone can outlast the window, so two lives in three
        // count it from when the process holds its partitions.
        if dice.below(3) > 0 {
            new_holder(&h, &mut seen).await?;
        }
        tokio::time::sleep(Duration::from_millis(150 + dice.below(450))).await;
        sigkill(child)?;
        kills += 1;
        // Whoever holds partitions now is the killed process on its way out.
        seen.extend(holders(h.pool()).await?.into_iter().map(|(name, _)| name));
        let (at, highest) = standing(&h, partition).await?;
        positions.push(at);
        // Some of the backlog applied (by one model at least), not all of it.
        if highest > 0 && at < last as i64 {
            during_catch_up += 1;
        }
        if at >= last as i64 {
            break;
        }
        if during_catch_up >= MIN_KILLS_DURING_CATCH_UP && started.elapsed() >= KILLING_FOR {
            break;
        }
        anyhow::ensure!(
            started.elapsed() < DEADLINE,
            "no catch-up after {kills} kills (seed {seed}): {positions:?}"
        );
    }
    anyhow::ensure!(
        during_catch_up >= MIN_KILLS_DURING_CATCH_UP,
        "only {during_catch_up} kills landed during the catch-up (seed {seed}): {positions:?}"
    );
    // A last process that runs to the end, killed idle (in chunks of the default size: it only
    // has to get there).
    let child = projector_command(&h)
        .env("PROJECTOR_BATCH_MAX", "500")
        .spawn()?;
    every_checkpoint_at(h.pool(), last).await?;
    sigkill(child)?;

    for (model, at) in checkpoints(h.pool()).await? {
        assert_eq!(at, last as i64, "{model}'s checkpoint");
    }
    assert_ledger_stored_once(h.pool(), &workload.ledger).await?;
    let clean = fresh_fold(&h, last).await?;
    assert_same_read_models(h.pool(), &clean.pool).await?;
    eprintln!(
        "{kills} kills ({during_catch_up} during the catch-up, the last at {:?} of {last}) over \
         {} records in {:?}",
        positions.last(),
        workload.ledger.records,
        started.elapsed()
    );
    Ok(())
}

/// Projectors on one database that are aborted and restarted over and over.
struct Storm {
    running: Vec<(CancellationToken, JoinHandle<anyhow::Result<()>>)>,
}

impl Storm {
    async fn restart(&mut self, h: &Harness, which: usize) -> anyhow::Result<()> {
        if let Some((_, task)) = self.running.get(which) {
            // Like a crash: the chunk in flight is dropped, its transaction rolled back.
            task.abort();
        }
        let projector = Projector::build(&h.config).await?;
        let shutdown = CancellationToken::new();
        let task = tokio::spawn(projector.run(shutdown.clone()));
        if which < self.running.len() {
            self.running[which] = (shutdown, task);
        } else {
            self.running.push((shutdown, task));
        }
        Ok(())
    }
}

#[tokio::test]
async fn a_storm_of_consumer_restarts_over_slow_commits_applies_nothing_twice() -> anyhow::Result<()>
{
    let mut h = Harness::start().await?;
    h.stop_projector().await?;
    let mut storm = Storm {
        running: Vec::new(),
    };
    // Two projectors at once: each one's consumer delivers what the other already applied.
    storm.restart(&h, 0).await?;
    storm.restart(&h, 1).await?;

    // Slow commits: inserts into the busiest tables wait behind a lock now and then.
    let stop = CancellationToken::new();
    let slow = tokio::spawn({
        let (pool, stop) = (h.pool().clone(), stop.clone());
        async move {
            // One table at a time: a chunk holding one table and waiting for the other would
            // otherwise deadlock with this.
            let tables = ["chat_messages", "events", "players", "sessions"];
            let mut round = 0;
            while !stop.is_cancelled() {
                let mut tx = pool.begin().await?;
                let table = tables[round % tables.len()];
                round += 1;
                sqlx::query(&format!("LOCK TABLE {table} IN SHARE ROW EXCLUSIVE MODE"))
                    .execute(&mut *tx)
                    .await?;
                tokio::time::sleep(Duration::from_millis(150)).await;
                tx.commit().await?;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            anyhow::Ok(())
        }
    });

    let mut workload = Workload::new();
    let mut restarts = 0;
    for round in 0..30 {
        workload.publish_records(&h, 500).await?;
        storm.restart(&h, round % 2).await?;
        restarts += 1;
        tokio::time::sleep(Duration::from_millis(60)).await;
    }
    stop.cancel();
    slow.await??;
    let last = workload.ledger.last_sequence;
    every_checkpoint_at(h.pool(), last).await?;
    for (shutdown, task) in storm.running.drain(..) {
        shutdown.cancel();
        tokio::time::timeout(Duration::from_secs(10), task).await???;
    }

    assert_ledger_stored_once(h.pool(), &workload.ledger).await?;
    let clean = fresh_fold(&h, last).await?;
    assert_same_read_models(h.pool(), &clean.pool).await?;
    eprintln!(
        "{restarts} consumer restarts over {} records",
        workload.ledger.records
    );
    Ok(())
}
