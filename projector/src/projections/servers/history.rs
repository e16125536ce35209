//! The servers model's history: raw samples and the three rollups folded from them
//! (`server_minutes`, `server_five_minutes`, `server_hours`; see migration 0012), and their
//! pruning.
//!
//! One statement inserts the samples `ON CONFLICT DO NOTHING` and folds exactly the rows it
//! inserted (its `RETURNING`) into every rollup, so a heartbeat logged or applied twice is
//! counted once at every resolution. Retention is measured behind each server's latest
//! heartbeat; since [`super::fold`] never samples a heartbeat more than [`SAMPLE_RETENTION`]
//! behind it, and every rollup outlives that, no replay can fold into a pruned row again.

use super::{SAMPLE_RETENTION, Sample};
use chrono::Duration;
use sqlx::PgConnection;

/// How far behind its server's latest heartbeat a minute or five-minute row is kept: the 1 h,
/// 24 h and 7 d charts read them, plus a day of slack.
pub const MINUTE_RETENTION: Duration = Duration::days(8);

/// How far behind its server's latest heartbeat an hourly row is kept: the 30 d chart reads
/// them; a year and a month leaves room for year-on-year views.
pub const HOUR_RETENTION: Duration = Duration::days(400);

/// Rows deleted per server per table per prune at most, so one prune stays cheap after a
/// backlog (the next prune, a minute later, continues).
const PRUNE_ROWS_PER_SERVER: i64 = 10_000;

/// The minute a sample belongs to, in SQL over `inserted.at`.
const MINUTE: &str = "date_trunc('minute', at, 'UTC')";
/// Its five-minute bucket (aligned to the hour: the origin is a whole hour).
pub(super) const FIVE: &str = "date_bin('5 minutes', at, timestamptz '2000-01-01 00:00:00+00')";
/// Its hour.
const HOUR: &str = "date_trunc('hour', at, 'UTC')";

/// The aggregate columns every rollup shares, over `inserted`.
const AGGREGATES: &str = "count(*)::int4 AS samples, sum(tps) AS tps_sum, min(tps) AS tps_min, \
    max(tps) AS tps_max, sum(player_count) AS player_count_sum, \
    min(player_count) AS player_count_min, max(player_count) AS player_count_max";

/// How a rollup row `r` takes in `EXCLUDED`: sums add, extremes widen.
const MERGE: &str = "samples = r.samples + EXCLUDED.samples, \
    tps_sum = r.tps_sum + EXCLUDED.tps_sum, \
    tps_min = LEAST(r.tps_min, EXCLUDED.tps_min), \
    tps_max = GREATEST(r.tps_max, EXCLUDED.tps_max), \
    player_count_sum = r.player_count_sum + EXCLUDED.player_count_sum, \
    player_count_min = LEAST(r.player_count_min, EXCLUDED.player_count_min), \
    player_count_max = GREATEST(r.player_count_max, EXCLUDED.player_count_max)";

/// The rollup columns after the key, in table order (`server_hours` has `online_minutes`
/// between `samples` and these).
const COLUMNS: &str =
    "tps_sum, tps_min, tps_max, player_count_sum, player_count_min, player_count_max";

/// The statement of [`sample`]. `server_hours.online_minutes` counts the minute rows this
/// statement created (`xmax = 0` in the minute upsert's `RETURNING` tells an insert from an
/// update), so each minute with a heartbeat is counted once in its hour.
static SAMPLE: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "WITH inserted AS (
             INSERT INTO server_samples (account_id, server_id, at, tps, player_count)
             SELECT * FROM UNNEST($1::uuid[], $2::uuid[], $3::timestamptz[], $4::float8[],
                                  $5::int4[])
             ON CONFLICT (account_id, server_id, at) DO NOTHING
             RETURNING account_id, server_id, at, tps, player_count
         ),
         minutes AS (
             INSERT INTO server_minutes AS r (account_id, server_id, minute, samples, {COLUMNS})
             SELECT account_id, server_id, {MINUTE}, {AGGREGATES}
             FROM inserted GROUP BY 1, 2, 3
             ON CONFLICT (account_id, server_id, minute) DO UPDATE SET {MERGE}
             RETURNING account_id, server_id, date_trunc('hour', minute, 'UTC') AS hour,
                       (xmax = 0) AS created
         ),
         five AS (
             INSERT INTO server_five_minutes AS r (account_id, server_id, bucket, samples,
                                                   {COLUMNS})
             SELECT account_id, server_id, {FIVE}, {AGGREGATES}
             FROM inserted GROUP BY 1, 2, 3
             ON CONFLICT (account_id, server_id, bucket) DO UPDATE SET {MERGE}
         )
         INSERT INTO server_hours AS r (account_id, server_id, hour, samples, online_minutes,
                                        {COLUMNS})
         SELECT h.account_id, h.server_id, h.hour, h.samples, COALESCE(n.created, 0),
                h.tps_sum, h.tps_min, h.tps_max, h.player_count_sum, h.player_count_min,
                h.player_count_max
         FROM (SELECT account_id, server_id, {HOUR} AS hour, {AGGREGATES}
               FROM inserted GROUP BY 1, 2, 3) h
         LEFT JOIN (SELECT account_id, server_id, hour,
                           (count(*) FILTER (WHERE created))::int4 AS created
                    FROM minutes GROUP BY 1, 2, 3) n
           ON n.account_id = h.account_id AND n.server_id = h.server_id AND n.hour = h.hour
         ON CONFLICT (account_id, server_id, hour) DO UPDATE SET {MERGE},
            online_minutes = r.online_minutes + EXCLUDED.online_minutes"
    )
});

/// Inserts samples and folds exactly the ones inserted into every rollup; returns the hourly
/// rows written.
pub(super) async fn sample(
    conn: &mut PgConnection,
    samples: &[Sample],
) -> Result<u64, sqlx::Error> {
    fn col<T>(samples: &[Sample], f: impl Fn(&Sample) -> T) -> Vec<T> {
        samples.iter().map(f).collect()
    }
    let result = sqlx::query(SAMPLE.as_str())
        .bind(col(samples, |s| s.account_id))
        .bind(col(samples, |s| s.server_id))
        .bind(col(samples, |s| s.at))
        .bind(col(samples, |s| s.tps))
        .bind(col(samples, |s| s.player_count))
        .execute(conn)
        .await?;
    Ok(result.rows_affected())
}

/// Deletes samples more than [`SAMPLE_RETENTION`] older than their server's latest heartbeat
/// (at most [`PRUNE_ROWS_PER_SERVER`] per server); returns how many. Each server costs one
/// index range probe; the rows go by `ctid`.
pub async fn prune_samples(conn: &mut PgConnection) -> Result<u64, sqlx::Error> {
    prune(conn, "server_samples", "at", SAMPLE_RETENTION).await
}

/// Deletes rollup rows past their retention ([`MINUTE_RETENTION`], [`HOUR_RETENTION`]; the
/// network rows of `network_five_minutes` like the five-minute ones)
/// behind their server's latest heartbeat; returns how many.
pub async fn prune_rollups(conn: &mut PgConnection) -> Result<u64, sqlx::Error> {
    let mut pruned = prune(conn, "server_minutes", "minute", MINUTE_RETENTION).await?;
    pruned += prune(conn, "server_five_minutes", "bucket", MINUTE_RETENTION).await?;
    pruned += prune(conn, "server_hours", "hour", HOUR_RETENTION).await?;
    pruned += super::network::prune(conn, MINUTE_RETENTION).await?;
    Ok(pruned)
}

/// Deletes rows of `table` whose `time` is more than `retention` older than their server's
/// latest heartbeat, at most [`PRUNE_ROWS_PER_SERVER`] per server. `table` and `time` are
/// constants of this module.
async fn prune(
    conn: &mut PgConnection,
    table: &str,
    time: &str,
    retention: Duration,
) -> Result<u64, sqlx::Error> {
    let result = sqlx::query(&format!(
        "DELETE FROM {table}
         WHERE ctid = ANY(ARRAY(
             SELECT old.ctid
             FROM servers v
             CROSS JOIN LATERAL (
                 SELECT x.ctid FROM {table} x
                 WHERE x.account_id = v.account_id AND x.server_id = v.id
                   AND x.{time} < v.last_heartbeat_at - make_interval(secs => $1)
                 LIMIT $2) AS old))"
    ))
    .bind(retention.as_seconds_f64())
    .bind(PRUNE_ROWS_PER_SERVER)
    .execute(conn)
    .await?;
    Ok(result.rows_affected())
}
