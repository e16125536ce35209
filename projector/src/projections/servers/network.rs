//! The network chart's read model, `network_five_minutes`: per account and five-minute
//! bucket, the players online across its game servers (each server's average over the
//! bucket, summed; proxies left out, as the Overview counts them). One row per bucket, not
//! one per server, so the Overview's 24-hour chart reads 288 rows whatever the network's size.
//!
//! Each row is recomputed from `server_five_minutes` (same model, same transaction) for every
//! bucket a chunk sampled, and for every bucket of a server whose role the chunk changed, so
//! the row always equals the sum it stands for: replaying a chunk recomputes the same value.

use super::ServerKey;
use super::history::FIVE;
use chrono::{DateTime, Duration, Utc};
use sqlx::PgConnection;
use std::sync::LazyLock;
use uuid::Uuid;

/// Rows deleted per account per prune at most.
const PRUNE_ROWS_PER_ACCOUNT: i64 = 10_000;

/// The statement of [`refresh`]: `$1`/`$2` the sampled (account, time) pairs, `$3`/`$4`
/// the servers whose role changed.
static REFRESH: LazyLock<String> = LazyLock::new(|| {
    format!(
        "WITH touched AS (
             SELECT DISTINCT account_id, {FIVE} AS bucket
             FROM UNNEST($1::uuid[], $2::timestamptz[]) AS t(account_id, at)
             UNION
             SELECT f.account_id, f.bucket FROM server_five_minutes f
             JOIN UNNEST($3::uuid[], $4::uuid[]) AS c(account_id, id)
               ON f.account_id = c.account_id AND f.server_id = c.id
         )
         INSERT INTO network_five_minutes AS n (account_id, bucket, players)
         SELECT t.account_id, t.bucket,
                (SELECT sum(f.player_count_sum::float8 / f.samples)
                 FROM server_five_minutes f
                 WHERE f.account_id = t.account_id AND f.bucket = t.bucket
                   AND NOT EXISTS (SELECT 1 FROM servers s
                     WHERE s.account_id = f.account_id AND s.id = f.server_id
                       AND s.role = 'proxy'))
         FROM touched t
         ON CONFLICT (account_id, bucket) DO UPDATE SET players = EXCLUDED.players
         WHERE n.players IS DISTINCT FROM EXCLUDED.players"
    )
});

/// Recomputes the network rows of the buckets `sampled` falls in (account, heartbeat time)
/// and of every bucket of the servers in `role_changed`; returns the rows written.
pub(super) async fn refresh(
    conn: &mut PgConnection,
    sampled: &[(Uuid, DateTime<Utc>)],
    role_changed: &[ServerKey],
) -> Result<u64, sqlx::Error> {
    if sampled.is_empty() && role_changed.is_empty() {
        return Ok(0);
    }
    let (accounts, times): (Vec<Uuid>, Vec<DateTime<Utc>>) = sampled.iter().copied().unzip();
    let (changed_accounts, changed): (Vec<Uuid>, Vec<Uuid>) = role_changed.iter().copied().unzip();
    let result = sqlx::query(REFRESH.as_str())
        .bind(accounts)
        .bind(times)
        .bind(changed_accounts)
        .bind(changed)
        .execute(conn)
        .await?;
    Ok(result.rows_affected())
}

/// Deletes network rows more than `retention` older than their account's latest heartbeat
/// (at most [`PRUNE_ROWS_PER_ACCOUNT`] per account); returns how many.
pub(super) async fn prune(
    conn: &mut PgConnection,
    retention: Duration,
) -> Result<u64, sqlx::Error> {
    let result = sqlx::query(
        "DELETE FROM network_five_minutes
         WHERE ctid = ANY(ARRAY(
             SELECT old.ctid
             FROM (SELECT account_id, max(last_heartbeat_at) AS latest
                   FROM servers GROUP BY account_id) v
             CROSS JOIN LATERAL (
                 SELECT x.ctid FROM network_five_minutes x
                 WHERE x.account_id = v.account_id
                   AND x.bucket < v.latest - make_interval(secs => $1)
                 LIMIT $2) AS old))",
    )
    .bind(retention.as_seconds_f64())
    .bind(PRUNE_ROWS_PER_ACCOUNT)
    .execute(conn)
    .await?;
    Ok(result.rows_affected())
}
