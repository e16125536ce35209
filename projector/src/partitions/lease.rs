//! PostgreSQL sessions behind the claims: the process's membership, and one partition's lease.
//!
//! Each lives on a dedicated connection (outside the pool, so no transaction ever runs on a
//! session holding a lock): when the process dies, even by kill -9, PostgreSQL ends its
//! sessions and every lock goes with them.

use sqlx::postgres::PgConnectOptions;
use sqlx::{ConnectOptions, Connection, PgConnection};
use std::future::Future;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// How often a lease's session is checked; a lost session stops its partition's consumer.
const LEASE_CHECK: Duration = Duration::from_secs(2);

/// The key every projector process of `stream` holds shared while it runs. It is the lock the
/// projector's single leader took exclusively before partitions, so a process of that version
/// and one of this version never consume at the same time.
pub(super) fn membership_key(stream: &str) -> String {
    format!("{}:{stream}", crate::leadership::PROJECTOR)
}

/// The key of `partition`'s lease.
pub(super) fn partition_key(stream: &str, partition: u16) -> String {
    format!("{}:{stream}:p{partition}", crate::leadership::PROJECTOR)
}

/// A new session for a lock.
pub(super) async fn connect(options: &PgConnectOptions) -> Result<PgConnection, sqlx::Error> {
    options.connect().await
}

/// The process's membership: a shared lock on [`membership_key`], held by its own session.
pub(super) struct Membership {
    session: Option<PgConnection>,
    key: String,
    /// Whether the wait for a pre-partition projector was logged (once per wait).
    waiting: bool,
}

impl Membership {
    pub(super) fn new(stream: &str) -> Membership {
        Membership {
            session: None,
            key: membership_key(stream),
            waiting: false,
        }
    }

    /// How many projector processes are members, this one included; `None` while this process
    /// is not one (a pre-partition projector holds the key exclusively, or PostgreSQL cannot
    /// be reached). Joins first when needed.
    pub(super) async fn live(&mut self, options: &PgConnectOptions) -> Option<i64> {
        if self.session.is_none() {
            let mut session = connect(options).await.ok()?;
            let joined: bool =
                sqlx::query_scalar("SELECT pg_try_advisory_lock_shared(hashtext($1))")
                    .bind(&self.key)
                    .fetch_one(&mut session)
                    .await
                    .ok()?;
            if !joined {
                if !self.waiting {
                    tracing::warn!(
                        key = %self.key,
                        "a projector of a version before partitions holds the stream; \
                         waiting for it to stop"
                    );
                }
                self.waiting = true;
                let _ = session.close().await;
                return None;
            }
            self.waiting = false;
            self.session = Some(session);
        }
        let session = self.session.as_mut()?;
        // A single-bigint advisory key shows in pg_locks as classid (high 32 bits), objid (low
        // 32 bits) and objsubid 1; hashtext's int4 is sign-extended first.
        let live = sqlx::query_scalar(
            "SELECT count(*) FROM pg_locks, (SELECT hashtext($1)::bigint AS key) AS k
             WHERE locktype = 'advisory' AND granted AND mode = 'ShareLock' AND objsubid = 1
               AND classid = ((k.key >> 32) & 4294967295)::oid
               AND objid = (k.key & 4294967295)::oid
               AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
        )
        .bind(&self.key)
        .fetch_one(&mut *session)
        .await;
        match live {
            Ok(live) => Some(live),
            Err(error) => {
                tracing::warn!(%error, "lost the membership session; joining again");
                self.session = None;
                None
            }
        }
    }

    /// The membership session's backend pid: differs between processes, so each starts its
    /// search for free partitions elsewhere.
    pub(super) async fn backend_pid(&mut self) -> Option<i32> {
        let session = self.session.as_mut()?;
        sqlx::query_scalar("SELECT pg_backend_pid()")
            .fetch_one(session)
            .await
            .ok()
    }

    /// Leaves: the lock is released with the session.
    pub(super) async fn leave(&mut self) {
        if let Some(session) = self.session.take() {
            let _ = session.close().await;
        }
    }
}

/// Tries for `partition`'s lease on `session`; `Ok(false)` when another process holds it.
pub(super) async fn try_take(
    session: &mut PgConnection,
    stream: &str,
    partition: u16,
) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar("SELECT pg_try_advisory_lock(hashtext($1))")
        .bind(partition_key(stream, partition))
        .fetch_one(session)
        .await
}

/// A partition held by this process: its lease session and its consumer, in one task.
pub(super) struct Lease {
    stop: CancellationToken,
    task: JoinHandle<()>,
}

impl Lease {
    /// Holds the lease already taken on `session` and runs `work` (which ends once `stop`
    /// fires) until `stop` fires or the session is lost; then unlocks and closes the session.
    pub(super) fn start<W>(
        session: PgConnection,
        key: String,
        stop: CancellationToken,
        work: W,
    ) -> Lease
    where
        W: Future<Output = ()> + Send + 'static,
    {
        let task = tokio::spawn(hold(session, key, stop.clone(), work));
        Lease { stop, task }
    }

    /// Whether its consumer ended (its session was lost).
    pub(super) fn is_finished(&self) -> bool {
        self.task.is_finished()
    }

    /// Stops the consumer (a chunk being applied commits first) and releases the lease.
    pub(super) async fn release(self) {
        self.stop.cancel();
        if let Err(error) = self.task.await {
            tracing::error!(%error, "a partition's consumer failed");
        }
    }
}

async fn hold<W: Future<Output = ()>>(
    mut session: PgConnection,
    key: String,
    stop: CancellationToken,
    work: W,
) {
    tokio::pin!(work);
    let mut check = tokio::time::interval(LEASE_CHECK);
    check.tick().await;
    loop {
        tokio::select! {
            () = &mut work => break,
            _ = check.tick() => {}
        }
        if sqlx::query("SELECT 1").execute(&mut session).await.is_err() {
            tracing::warn!(%key, "lost a partition's lease session; stopping its consumer");
            stop.cancel();
            work.await;
            // The session is gone, and its lock with it.
            return;
        }
    }
    let _ = sqlx::query("SELECT pg_advisory_unlock(hashtext($1))")
        .bind(&key)
        .execute(&mut session)
        .await;
    let _ = session.close().await;
}
