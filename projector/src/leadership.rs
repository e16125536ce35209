//! One active consumer per event stream and role (the notifier's evaluator), with fast takeover.
//! The projector shares the log's partitions between its processes instead
//! ([`crate::partitions`]); its key here, [`PROJECTOR`], is the one its single leader took before
//! partitions, which every projector process now holds shared.
//!
//! Any number of instances may run; the one holding a PostgreSQL advisory lock (keyed by the
//! role's prefix and the stream's name) consumes, the others wait as standbys and try for the lock
//! every [`STANDBY_POLL`]. The lock lives on a dedicated connection: when the leader dies
//! (even by kill -9) PostgreSQL drops its session and the lock with it, and a standby takes
//! over within a poll. A leader that can no longer reach PostgreSQL steps down.
//!
//! Leadership saves work; it is not what keeps effects exactly-once. Every chunk transaction
//! locks the checkpoint rows and skips what they already cover, so even two active
//! projectors (e.g. during a network partition of the lock session) never apply a message
//! twice.

use sqlx::pool::PoolConnection;
use sqlx::{PgPool, Postgres};
use std::future::Future;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How often a standby tries for the lock.
pub(crate) const STANDBY_POLL: Duration = Duration::from_secs(1);
/// How often the leader checks that its lock session is alive.
const LEADER_CHECK: Duration = Duration::from_secs(2);

/// The projector's lock prefix (its membership and partition leases).
pub(crate) const PROJECTOR: &str = "warden-projector";
/// The notifier's evaluator's lock prefix: it leads independently of the projector.
pub(crate) const NOTIFIER: &str = "warden-notifier";

/// The advisory-lock key for a role and stream (PostgreSQL's `hashtext` of `{prefix}:{stream}`).
fn lock_name(prefix: &str, stream: &str) -> String {
    format!("{prefix}:{stream}")
}

/// Leads while it can: waits for the lock of `prefix` on `stream`, runs `work` while holding it
/// (with a token cancelled when the lock session is lost), and stands by again after losing it,
/// until `shutdown`. `set_leader` hears every change of role.
pub(crate) async fn lead<F, Fut>(
    pool: &PgPool,
    prefix: &'static str,
    stream: &str,
    shutdown: &CancellationToken,
    mut set_leader: impl FnMut(bool),
    mut work: F,
) -> anyhow::Result<()>
where
    F: FnMut(CancellationToken) -> Fut,
    Fut: Future<Output = anyhow::Result<()>>,
{
    loop {
        let Some(session) = become_leader(pool, prefix, stream, shutdown).await else {
            return Ok(());
        };
        set_leader(true);
        let term = shutdown.child_token();
        let worked = {
            let held = hold(session, prefix, stream, &term);
            tokio::pin!(held);
            tokio::select! {
                result = work(term.clone()) => {
                    // Let `hold` release the lock: dropped instead, its session would go
                    // back to the pool still holding it, and while anything else keeps
                    // the pool alive (a readiness probe) no standby could take over.
                    term.cancel();
                    (&mut held).await;
                    result
                }
                () = &mut held => Ok(()),
            }
        };
        term.cancel();
        set_leader(false);
        worked?;
        if shutdown.is_cancelled() {
            return Ok(());
        }
    }
}

/// Waits until this instance holds the lock; `None` when `shutdown` fires first.
async fn become_leader(
    pool: &PgPool,
    prefix: &str,
    stream: &str,
    shutdown: &CancellationToken,
) -> Option<PoolConnection<Postgres>> {
    let mut announced = false;
    loop {
        if let Ok(mut session) = pool.acquire().await {
            let locked: Result<bool, _> =
                sqlx::query_scalar("SELECT pg_try_advisory_lock(hashtext($1))")
                    .bind(lock_name(prefix, stream))
                    .fetch_one(&mut *session)
                    .await;
            if matches!(locked, Ok(true)) {
                tracing::info!(stream, role = prefix, "this instance is the leader");
                return Some(session);
            }
            if !announced {
                tracing::info!(
                    stream,
                    role = prefix,
                    "another instance is the leader; standing by"
                );
                announced = true;
            }
            // Close the session rather than return it: a pooled connection is reused by the
            // chunk transactions, and a lock attempt must not linger on one of them.
            let _ = session.detach();
        }
        tokio::select! {
            () = shutdown.cancelled() => return None,
            () = tokio::time::sleep(STANDBY_POLL) => {}
        }
    }
}

/// Resolves when the leader's lock session stops answering (or `term` fires); the caller then
/// stops consuming. Releases the lock explicitly on the way out.
async fn hold(
    mut session: PoolConnection<Postgres>,
    prefix: &str,
    stream: &str,
    term: &CancellationToken,
) {
    loop {
        tokio::select! {
            () = term.cancelled() => break,
            () = tokio::time::sleep(LEADER_CHECK) => {}
        }
        if sqlx::query("SELECT 1")
            .execute(&mut *session)
            .await
            .is_err()
        {
            tracing::warn!(
                stream,
                "lost the leader's PostgreSQL session; stepping down"
            );
            // The session is gone, and its lock with it.
            let _ = session.detach();
            return;
        }
    }
    let _ = sqlx::query("SELECT pg_advisory_unlock(hashtext($1))")
        .bind(lock_name(prefix, stream))
        .execute(&mut *session)
        .await;
    let _ = session.detach();
}
