//! The index build phase ([`build`]): once the load has reached the live checkpoints, makes
//! the copy's tables logged, builds the indexes it did without while loading
//! ([`super::deferred`]) under the live names, and gathers statistics, before the catch-up
//! and the swap.

use super::copy::{TableCopy, quoted};
use super::index_plan::{Job, Next, Plan, Step};
use super::progress::Tracker;
use anyhow::Context;
use sqlx::{Connection, Executor, PgConnection, PgPool};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// Statements of the index build at once, each on its own connection (PostgreSQL may give
/// each index build parallel workers of its own besides).
const AT_ONCE: usize = 2;
/// Memory for each index build's sort: a sort that fits runs in one pass.
const MAINTENANCE_WORK_MEM: &str = "256MB";
/// How often the index builds' own progress is looked up.
const LOOK_EVERY: Duration = Duration::from_millis(500);

/// What each step costs per byte of its table, relative to the others, as measured on a
/// million-record log (2 cores): making a table logged 1, a B-tree index 0.8, a GIN
/// (trigram) index 1.6, `VACUUM (ANALYZE)` 0.2. Only the index build's ETA depends on them.
const SET_LOGGED_COST: f64 = 1.0;
const BTREE_COST: f64 = 0.8;
const GIN_COST: f64 = 1.6;
const VACUUM_COST: f64 = 0.2;

/// The index build phase: the copy's tables made logged, its deferred indexes built, the
/// live indexes' statistics targets set on the copy's, then `VACUUM (ANALYZE)` (planner
/// statistics, and pages marked all-visible so index-only scans skip the heap right after the
/// swap). [`AT_ONCE`] statements run at once, each table's in that order and the tables side
/// by side, the longest chain of work first ([`index_plan`]).
///
/// A table is made logged before its indexes are built: `SET LOGGED` rewrites a table and
/// rebuilds every index it has, so indexes built before it would be built twice.
pub(super) async fn build(
    copy: &TableCopy,
    database_url: &str,
    pool: &PgPool,
    tracker: &Tracker,
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
    let sizes: Vec<(String, i64)> = sqlx::query_as(
        "SELECT c.relname::text, pg_table_size(c.oid)
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = $1 AND c.relname = ANY($2)",
    )
    .bind(&copy.schema)
    .bind(&copy.tables)
    .fetch_all(&mut connections[0].1)
    .await?;
    let weight = |table: &str| {
        let bytes = sizes.iter().find(|(t, _)| t == table).map_or(0, |s| s.1);
        bytes.max(0) as f64 + 8192.0
    };
    let qualified = |table: &str| format!("{}.{table}", copy.schema);
    let mut jobs = Vec::new();
    for &table in &copy.tables {
        jobs.push(Job {
            sql: format!("ALTER TABLE {} SET LOGGED", qualified(table)),
            table,
            step: Step::Logged,
            weight: SET_LOGGED_COST * weight(table),
        });
        jobs.push(Job {
            sql: format!("VACUUM (ANALYZE) {}", qualified(table)),
            table,
            step: Step::Vacuum,
            weight: VACUUM_COST * weight(table),
        });
    }
    for deferred in &copy.deferred {
        let sql = deferred.statement(&copy.schema);
        let cost = if sql.contains(" USING gin ") {
            GIN_COST
        } else {
            BTREE_COST
        };
        jobs.push(Job {
            weight: cost * weight(deferred.table),
            table: deferred.table,
            step: Step::Index,
            sql,
        });
    }
    let work = Work {
        total: jobs.iter().map(|j| j.weight).sum(),
        done: Mutex::new(0.0),
        running: Mutex::new(Vec::new()),
        tracker,
    };
    let stop = CancellationToken::new();
    let (ran, ()) = tokio::join!(
        async {
            let ran = work
                .run(&mut connections, Plan::new(jobs), &copy.schema)
                .await;
            stop.cancel();
            ran
        },
        work.follow(pool, &stop)
    );
    ran?;
    for (_, conn) in connections {
        conn.close().await?;
    }
    Ok(())
}

/// A row of `pg_stat_progress_create_index`: the backend, its blocks and tuples done of all.
type BuildProgress = (i32, i64, i64, i64, i64);

/// The phase's work: how much is done of how much, told to the tracker as a fraction.
struct Work<'a> {
    total: f64,
    /// The weight of the statements finished.
    done: Mutex<f64>,
    /// The backend and weight of each statement running.
    running: Mutex<Vec<(i32, f64)>>,
    tracker: &'a Tracker,
}

impl Work<'_> {
    /// Runs the jobs of `plan` on `connections`, each taking the next ready one when it is
    /// free; a table's statistics targets are set just before it is analyzed.
    async fn run(
        &self,
        connections: &mut [(i32, PgConnection)],
        plan: Plan,
        schema: &str,
    ) -> anyhow::Result<()> {
        let plan = Mutex::new(plan);
        let finished = Notify::new();
        let workers = connections.iter_mut().map(|(pid, conn)| {
            let (plan, finished) = (&plan, &finished);
            async move {
                loop {
                    // Made before looking, so a job finishing in between still wakes it.
                    let woken = finished.notified();
                    let taken = {
                        let mut plan = plan.lock().unwrap_or_else(PoisonError::into_inner);
                        match plan.next() {
                            Next::Run(index) => {
                                let job = plan.job(index);
                                Some((index, job.sql.clone(), job.table, job.step, job.weight))
                            }
                            Next::Wait => None,
                            Next::Finished => return anyhow::Ok(()),
                        }
                    };
                    let Some((index, sql, table, step, weight)) = taken else {
                        woken.await;
                        continue;
                    };
                    let started = Instant::now();
                    self.starts(*pid, weight);
                    if step == Step::Vacuum {
                        // Before the statistics are gathered: ANALYZE samples by them.
                        statistics_targets(conn, schema, table).await?;
                    }
                    conn.execute(sql.as_str())
                        .await
                        .with_context(|| format!("rebuild index build: {sql}"))?;
                    tracing::debug!(
                        statement = %sql,
                        ms = started.elapsed().as_millis() as u64,
                        "rebuild index build step"
                    );
                    self.ends(*pid, weight);
                    plan.lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .done(index);
                    finished.notify_waiters();
                }
            }
        });
        futures::future::try_join_all(workers).await?;
        Ok(())
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
        if let Ok(mut done) = self.done.lock() {
            *done += weight;
        }
        self.tell(0.0);
    }

    /// Tells the tracker the fraction done, with `partly` (weight) of what is running.
    fn tell(&self, partly: f64) {
        let done = self.done.lock().map_or(0.0, |d| *d);
        if self.total > 0.0 {
            self.tracker.fraction((done + partly) / self.total);
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
