//! The index build ([`build`]): makes the copy's tables logged, builds the indexes it did
//! without while loading ([`super::deferred`]) under the live names, and gathers statistics,
//! before the catch-up and the swap. It starts during the load, on one connection, with the
//! tables whose models have loaded everything ([`super::loaded`]), and goes on with the rest
//! on [`AT_ONCE`] connections once the load has ended (the index build phase).

use super::copy::{TableCopy, quoted};
use super::index_jobs::{jobs, size_of, sizes};
use super::index_plan::{Next, Plan, Step};
use super::progress::Tracker;
use super::replay::Replay;
use crate::projections::ReadModel;
use anyhow::Context;
use sqlx::{Connection, Executor, PgConnection, PgPool};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// Statements of the index build at once, each on its own connection (PostgreSQL may give
/// each index build parallel workers of its own besides). During the load, one.
const AT_ONCE: usize = 2;
/// Memory for each index build's sort: a sort that fits runs in one pass.
const MAINTENANCE_WORK_MEM: &str = "256MB";
/// How often the index builds' own progress, and during the load the tables loaded, are
/// looked up.
const LOOK_EVERY: Duration = Duration::from_millis(500);

/// The load the index build starts beside.
pub(super) struct Beside<'a> {
    /// Cancelled once the load has ended (the index build phase has begun).
    pub(super) ended: &'a CancellationToken,
    pub(super) replay: &'a Replay<'a>,
    pub(super) models: &'a [&'static dyn ReadModel],
}

/// The index build: the copy's tables made logged, its deferred indexes built, the live
/// indexes' statistics targets set on the copy's, then `VACUUM (ANALYZE)` (planner
/// statistics, and pages marked all-visible so index-only scans skip the heap right after the
/// swap). Each table's statements run in that order and the tables side by side, the longest
/// chain of work first ([`index_plan`](super::index_plan)).
///
/// During the load (until `load.ended`), one statement at a time, of the tables whose models
/// have loaded everything, with no parallel workers: the load's slowest model goes on alone
/// at its end, and the machine's other cores would idle. On the benchmark's log the chat
/// messages' trigram index (16 s, one process) is then mostly built before the load ends.
/// From the load's end, [`AT_ONCE`] statements at once, of every table.
///
/// A table is made logged before its indexes are built: `SET LOGGED` rewrites a table and
/// rebuilds every index it has, so indexes built before it would be built twice.
pub(super) async fn build(
    copy: &TableCopy,
    database_url: &str,
    pool: &PgPool,
    tracker: &Tracker,
    load: Beside<'_>,
) -> anyhow::Result<()> {
    let mut connections = Vec::with_capacity(AT_ONCE);
    for _ in 0..AT_ONCE {
        let mut conn = PgConnection::connect_with(&copy.options(database_url)?).await?;
        let set = format!("SET maintenance_work_mem = '{MAINTENANCE_WORK_MEM}'");
        conn.execute(set.as_str()).await?;
        let pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
            .fetch_one(&mut conn)
            .await?;
        connections.push((pid, conn));
    }
    let work = Work {
        plan: Mutex::new(Plan::new(jobs(copy))),
        progress: Mutex::new((0.0, 0.0)),
        telling: AtomicBool::new(false),
        running: Mutex::new(Vec::new()),
        tracker,
    };
    let every_table = CancellationToken::new();
    let stop = CancellationToken::new();
    tokio::try_join!(
        async {
            let ran = work
                .run(&mut connections, copy, pool, &load, &every_table)
                .await;
            stop.cancel();
            ran
        },
        async {
            load.ended.cancelled().await;
            // Only the tables no statement has started on: a running (or queued) `SET LOGGED`
            // holds its table's lock, which reading the table's size waits for (a statement
            // beside the load waiting on another transaction's lock would hold every table's
            // index build back).
            let unstarted = work
                .plan
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .unstarted();
            let sizes = sizes(pool, copy, &unstarted).await?;
            let left = {
                let mut plan = work.plan.lock().unwrap_or_else(PoisonError::into_inner);
                plan.reweigh(|table| size_of(&sizes, table));
                plan.left()
            };
            work.restart(left);
            every_table.cancel();
            work.follow(pool, &stop).await;
            anyhow::Ok(())
        }
    )?;
    for (_, conn) in connections {
        conn.close().await?;
    }
    Ok(())
}

/// A row of `pg_stat_progress_create_index`: the backend, its blocks and tuples done of all.
type BuildProgress = (i32, i64, i64, i64, i64);

/// The index build's jobs, and how much of the phase is done of how much, told to the tracker
/// as a fraction.
struct Work<'a> {
    plan: Mutex<Plan>,
    /// The weight of the phase's statements (what was left at the load's end), and of those
    /// finished since.
    progress: Mutex<(f64, f64)>,
    /// Whether the phase has begun: the fraction is told from then on.
    telling: AtomicBool,
    /// The backend and weight of each statement running.
    running: Mutex<Vec<(i32, f64)>>,
    tracker: &'a Tracker,
}

/// What a free connection does next ([`Next`], with the job's index in the plan, statement,
/// table, step and weight).
enum Turn {
    Run((usize, String, &'static str, Step, f64)),
    Wait,
    Finished,
}

impl Work<'_> {
    /// Runs the jobs of the plan on `connections`, each taking the next ready one when it is
    /// free: during the load, only the first connection, of the tables loaded (looked up
    /// every [`LOOK_EVERY`]); from `every_table`, every connection, of every table. A table's
    /// statistics targets are set just before it is analyzed.
    async fn run(
        &self,
        connections: &mut [(i32, PgConnection)],
        copy: &TableCopy,
        pool: &PgPool,
        load: &Beside<'_>,
        every_table: &CancellationToken,
    ) -> anyhow::Result<()> {
        let finished = Notify::new();
        let loaded: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
        let workers = connections.iter_mut().enumerate().map(|(n, (pid, conn))| {
            let (finished, loaded) = (&finished, &loaded);
            async move {
                if n > 0 {
                    every_table.cancelled().await;
                }
                let mut serial = false;
                loop {
                    // Made before looking, so a job finishing in between still wakes it.
                    let woken = finished.notified();
                    let during_load = !every_table.is_cancelled();
                    let (index, sql, table, step, weight) =
                        match self.take(during_load.then_some(loaded)) {
                            Turn::Run(job) => job,
                            Turn::Finished => return anyhow::Ok(()),
                            Turn::Wait if during_load => {
                                // The select only picks what happens next.
                                tokio::select! {
                                    biased;
                                    () = every_table.cancelled() => {}
                                    () = woken => {}
                                    () = tokio::time::sleep(LOOK_EVERY) => {
                                        self.open_loaded(pool, copy, load, loaded).await?;
                                    }
                                }
                                continue;
                            }
                            Turn::Wait => {
                                woken.await;
                                continue;
                            }
                        };
                    if serial != during_load {
                        // Beside the load, a statement takes one core at most.
                        serial = during_load;
                        let workers = if serial {
                            "SET max_parallel_maintenance_workers = 0"
                        } else {
                            "RESET max_parallel_maintenance_workers"
                        };
                        conn.execute(workers).await?;
                    }
                    let started = Instant::now();
                    self.starts(*pid, weight);
                    if step == Step::Vacuum {
                        // Before the statistics are gathered: ANALYZE samples by them.
                        statistics_targets(conn, &copy.schema, table).await?;
                    }
                    conn.execute(sql.as_str())
                        .await
                        .with_context(|| format!("rebuild index build: {sql}"))?;
                    tracing::debug!(
                        statement = %sql,
                        during_load,
                        ms = started.elapsed().as_millis() as u64,
                        "rebuild index build step"
                    );
                    self.ends(*pid, weight);
                    self.plan
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .done(index);
                    finished.notify_waiters();
                }
            }
        });
        futures::future::try_join_all(workers).await?;
        Ok(())
    }

    /// What a free connection does next: of the tables `loaded` if given, else of every table
    /// (a job it takes is marked running).
    fn take(&self, loaded: Option<&Mutex<Vec<&'static str>>>) -> Turn {
        let mut plan = self.plan.lock().unwrap_or_else(PoisonError::into_inner);
        let next = match loaded {
            Some(loaded) => {
                let loaded = loaded.lock().unwrap_or_else(PoisonError::into_inner);
                plan.next_among(|table| loaded.contains(&table))
            }
            None => plan.next(),
        };
        match next {
            Next::Run(index) => {
                let job = plan.job(index);
                Turn::Run((index, job.sql.clone(), job.table, job.step, job.weight))
            }
            Next::Wait => Turn::Wait,
            Next::Finished => Turn::Finished,
        }
    }

    /// Looks up the tables loaded (during the load), and weighs those new to `loaded`.
    async fn open_loaded(
        &self,
        pool: &PgPool,
        copy: &TableCopy,
        load: &Beside<'_>,
        loaded: &Mutex<Vec<&'static str>>,
    ) -> anyhow::Result<()> {
        let now = super::loaded::tables(pool, &copy.schema, load.models, load.replay).await?;
        let new: Vec<&'static str> = {
            let loaded = loaded.lock().unwrap_or_else(PoisonError::into_inner);
            now.into_iter().filter(|t| !loaded.contains(t)).collect()
        };
        if new.is_empty() {
            return Ok(());
        }
        let sizes = sizes(pool, copy, &new).await?;
        self.plan
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .reweigh(|table| size_of(&sizes, table));
        tracing::info!(tables = ?new, "rebuild: indexing loaded tables while the load goes on");
        loaded
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(new);
        Ok(())
    }

    /// The phase begins with `total` of work left.
    fn restart(&self, total: f64) {
        if let Ok(mut progress) = self.progress.lock() {
            *progress = (total, 0.0);
        }
        self.telling.store(true, Ordering::Release);
        self.tell(0.0);
    }

    fn starts(&self, pid: i32, weight: f64) {
        if let Ok(mut running) = self.running.lock() {
            running.push((pid, weight));
        }
    }

    fn ends(&self, pid: i32, weight: f64) {
        if let Ok(mut running) = self.running.lock() {
            running.retain(|(p, _)| *p != pid);
        }
        if let Ok(mut progress) = self.progress.lock() {
            progress.1 += weight;
        }
        self.tell(0.0);
    }

    /// Tells the tracker the fraction of the phase done, with `partly` (weight) of what is
    /// running.
    fn tell(&self, partly: f64) {
        let (total, done) = self.progress.lock().map_or((0.0, 0.0), |p| *p);
        if total > 0.0 && self.telling.load(Ordering::Acquire) {
            self.tracker.fraction((done + partly) / total);
        }
    }

    /// Until `stop`, looks up how far the running index builds got
    /// (`pg_stat_progress_create_index`) and tells it with what is done. Best effort: a
    /// failed look is only logged.
    async fn follow(&self, pool: &PgPool, stop: &CancellationToken) {
        loop {
            // The select only picks what happens next.
            tokio::select! {
                biased;
                () = stop.cancelled() => return,
                () = tokio::time::sleep(LOOK_EVERY) => {}
            }
            let running = self.running.lock().map(|r| r.clone()).unwrap_or_default();
            if running.is_empty() {
                continue;
            }
            let pids: Vec<i32> = running.iter().map(|(pid, _)| *pid).collect();
            let rows: Result<Vec<BuildProgress>, _> = sqlx::query_as(
                "SELECT pid, blocks_done, blocks_total, tuples_done, tuples_total
                 FROM pg_stat_progress_create_index WHERE pid = ANY($1)",
            )
            .bind(&pids)
            .fetch_all(pool)
            .await;
            match rows {
                Ok(rows) => {
                    let partly = rows
                        .iter()
                        .map(|&(pid, blocks, blocks_total, tuples, tuples_total)| {
                            let weight = running.iter().find(|r| r.0 == pid).map_or(0.0, |r| r.1);
                            weight * built(blocks, blocks_total, tuples, tuples_total)
                        })
                        .sum();
                    self.tell(partly);
                }
                Err(error) => tracing::debug!(%error, "could not look at the index builds"),
            }
        }
    }
}

/// How far an index build got, from `pg_stat_progress_create_index`: scanning the table is
/// the first half, sorting and loading its tuples the second.
pub(super) fn built(blocks: i64, blocks_total: i64, tuples: i64, tuples_total: i64) -> f64 {
    let part = |done: i64, total: i64| {
        if total > 0 {
            (done as f64 / total as f64).clamp(0.0, 1.0)
        } else {
            0.0
        }
    };
    if tuples_total > 0 {
        0.5 + 0.5 * part(tuples, tuples_total)
    } else {
        0.5 * part(blocks, blocks_total)
    }
}

/// Sets the statistics targets the live indexes' columns have (`ALTER INDEX ... SET
/// STATISTICS`, which `LIKE` and `pg_get_indexdef` leave out) on the indexes of the copy's
/// `table` of the same names.
async fn statistics_targets(
    conn: &mut PgConnection,
    schema: &str,
    table: &str,
) -> anyhow::Result<()> {
    let targets: Vec<(String, i32, i32)> = sqlx::query_as(
        "SELECT i.relname::text, a.attnum::int4, a.attstattarget::int4
         FROM pg_attribute a
         JOIN pg_class i ON i.oid = a.attrelid AND i.relkind = 'i'
         JOIN pg_namespace n ON n.oid = i.relnamespace AND n.nspname = 'public'
         WHERE a.attstattarget >= 0
           AND i.relname IN (SELECT c.relname FROM pg_index x
                             JOIN pg_class c ON c.oid = x.indexrelid
                             JOIN pg_class t ON t.oid = x.indrelid
                             JOIN pg_namespace cn ON cn.oid = t.relnamespace
                             WHERE cn.nspname = $1 AND t.relname = $2)",
    )
    .bind(schema)
    .bind(table)
    .fetch_all(&mut *conn)
    .await?;
    for (index, column, target) in targets {
        let alter = format!(
            "ALTER INDEX {schema}.{} ALTER COLUMN {column} SET STATISTICS {target}",
            quoted(&index)
        );
        conn.execute(alter.as_str()).await?;
    }
    Ok(())
}

/// Ends the index build's statements when `stop` fires first (an interrupted rebuild):
/// dropping their connections ends them within `client_connection_check_interval`.
pub(super) async fn or_stop<T>(
    stop: &CancellationToken,
    work: impl std::future::Future<Output = anyhow::Result<T>>,
) -> anyhow::Result<T> {
    tokio::select! {
        biased;
        () = stop.cancelled() => anyhow::bail!("the rebuild was interrupted"),
        done = work => done,
    }
}

#[cfg(test)]
mod tests {
    use super::built;

    #[test]
    fn an_index_build_is_half_done_once_its_table_is_scanned() {
        assert_eq!(built(0, 0, 0, 0), 0.0, "not started");
        assert_eq!(built(50, 100, 0, 0), 0.25);
        assert_eq!(built(100, 100, 0, 0), 0.5);
        assert_eq!(built(100, 100, 30, 120), 0.625);
        assert_eq!(built(100, 100, 200, 120), 1.0, "never past done");
    }
}
