//! A pooled connection that goes back to the pool only after its COPY was read to the end.
//!
//! sqlx keeps track of a connection's protocol state for ordinary queries, but not for COPY: a
//! COPY whose statement fails before the copy starts leaves PostgreSQL's `ReadyForQuery`
//! unread, and a COPY abandoned mid-stream (a format error of ours, a cancelled task) leaves
//! rows unread. Back in the pool, such a connection would answer the next query, of any
//! account, with the previous one's leftovers (other accounts' reads failing or
//! answering 404, connections left "idle in transaction"). So a COPY connection is closed,
//! not returned, unless the COPY finished cleanly; the pool opens a fresh one in its place.

use sqlx::pool::PoolConnection;
use sqlx::{PgConnection, PgPool, Postgres};

/// A connection checked out for one COPY; closed on drop unless [`Self::release`]d.
pub(crate) struct CopyConnection {
    connection: PoolConnection<Postgres>,
    clean: bool,
}

impl CopyConnection {
    /// Checks a connection out of `pool`.
    pub(crate) async fn acquire(pool: &PgPool) -> Result<CopyConnection, sqlx::Error> {
        Ok(CopyConnection {
            connection: pool.acquire().await?,
            clean: false,
        })
    }

    /// The connection, to run the COPY on.
    pub(crate) fn connection(&mut self) -> &mut PgConnection {
        &mut self.connection
    }

    /// The COPY was read to its end (trailer, `CommandComplete` and `ReadyForQuery`): the
    /// connection may serve other queries again.
    pub(crate) fn release(mut self) {
        self.clean = true;
    }
}

impl Drop for CopyConnection {
    fn drop(&mut self) {
        if !self.clean {
            // Whatever state the protocol is in, nobody else gets this connection.
            metrics::counter!("funnel_connections_discarded_total").increment(1);
            self.connection.close_on_drop();
        }
    }
}
