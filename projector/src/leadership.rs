//! One active projector per event stream, with fast takeover.
//!
//! Any number of projector instances may run; the one holding a PostgreSQL advisory lock
//! (keyed by the stream's name) consumes, the others wait as standbys and try for the lock
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
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How often a standby tries for the lock.
pub(crate) const STANDBY_POLL: Duration = Duration::from_secs(1);
/// How often the leader checks that its lock session is alive.
const LEADER_CHECK: Duration = Duration::from_secs(2);

/// The advisory-lock key for a stream (PostgreSQL's `hashtext` of a fixed prefix + name).
fn lock_name(stream: &str) -> String {
    format!("warden-projector:{stream}")
}

/// Waits until this instance holds the stream's lock; `None` when `shutdown` fires first.
pub(crate) async fn become_leader(
    pool: &PgPool,
    stream: &str,
    shutdown: &CancellationToken,
) -> Option<PoolConnection<Postgres>> {
    let mut announced = false;
    loop {
        if let Ok(mut session) = pool.acquire().await {
            let locked: Result<bool, _> =
                sqlx::query_scalar("SELECT pg_try_advisory_lock(hashtext($1))")
                    .bind(lock_name(stream))
                    .fetch_one(&mut *session)
                    .await;
            if matches!(locked, Ok(true)) {
                tracing::info!(stream, "this projector is the leader");
                return Some(session);
            }
            if !announced {
                tracing::info!(stream, "another projector is the leader; standing by");
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
pub(crate) async fn hold(
    mut session: PoolConnection<Postgres>,
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
        .bind(lock_name(stream))
        .execute(&mut *session)
        .await;
    let _ = session.detach();
}
