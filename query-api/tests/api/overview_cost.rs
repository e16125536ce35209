//! The Overview reads small things: on a dataset far larger than what it shows (20,000
//! players, thousands of punishments, sessions, events and flags, 40 servers with a day of
//! five-minute rollups), every statement of `GET /api/overview` reads fewer rows from tables
//! than a bound that does not grow with the dataset. Rows read are counted from
//! `EXPLAIN (ANALYZE, FORMAT JSON)`: each scan's rows returned and rows removed by its filter,
//! times its loops. Reading the per-server rollup, every player or every punishment of the
//! window again would read tens of thousands.

use crate::read_models::{Dashboard, keep_recent_activity, now};
use chrono::{Duration, DurationRound};
use query_api::queries::overview::{ACTIVITY_LIMIT, ACTIVITY_SQL, NETWORK_SPAN, NETWORK_SQL};
use query_api::routes::servers::server_statuses_sql;
use query_api::routes::staff::roster_sql;
use serde_json::Value;
use sqlx::PgConnection;
use uuid::Uuid;

/// Rows any one Overview statement may read from tables: the recent events and flags at 50
/// each with a player each, 288 network buckets, the account's servers and its few staff fit
/// well under it.
const ROWS_READ_BOUND: u64 = 1_000;

/// Rows read from tables by the plan `node` and its children, and each scan's share
/// (`node type on relation: rows`) for the failure message.
fn rows_read(node: &Value, scans: &mut Vec<String>) -> u64 {
    let number = |key: &str| node.get(key).and_then(Value::as_f64).unwrap_or(0.0);
    let kind = node.get("Node Type").and_then(Value::as_str).unwrap_or("");
    let relation = node.get("Relation Name").and_then(Value::as_str);
    let own = match relation {
        Some(relation) if kind.contains("Scan") => {
            let per_loop = number("Actual Rows")
                + number("Rows Removed by Filter")
                + number("Rows Removed by Index Recheck");
            let rows = (per_loop * number("Actual Loops")).round() as u64;
            let index = node.get("Index Name").and_then(Value::as_str).unwrap_or("");
            scans.push(format!("{kind} on {relation} {index}: {rows}"));
            rows
        }
        _ => 0,
    };
    let children = node
        .get("Plans")
        .and_then(Value::as_array)
        .map_or(0, |plans| plans.iter().map(|p| rows_read(p, scans)).sum());
    own + children
}

/// Runs `EXPLAIN (ANALYZE, FORMAT JSON)` of `query` (its parameters already bound) and
/// returns the rows it read from tables, with each scan's share.
async fn explain(
    conn: &mut PgConnection,
    query: sqlx::query::QueryScalar<'_, sqlx::Postgres, Value, sqlx::postgres::PgArguments>,
) -> anyhow::Result<(u64, Vec<String>)> {
    let plan = query.fetch_one(conn).await?;
    let mut scans = Vec::new();
    let rows = rows_read(&plan[0]["Plan"], &mut scans);
    Ok((rows, scans))
}

/// A large account: every table the Overview once summed or scanned is big.
async fn large_dataset(pool: &sqlx::PgPool, account: Uuid) -> anyhow::Result<()> {
    let statements = [
        "INSERT INTO servers (account_id, id, name, version, tps, player_count, max_players, \
           first_seen, last_heartbeat_at, last_heartbeat_seq, role) \
         SELECT $1, md5($1::text || 's' || i)::uuid, 'srv-' || i, 'Paper', 20, 30, 100, \
           now() - interval '2 days', now(), 1, CASE WHEN i = 0 THEN 'proxy' ELSE 'server' END \
         FROM generate_series(0, 39) i",
        "INSERT INTO server_five_minutes (account_id, server_id, bucket, samples, tps_sum, \
           tps_min, tps_max, player_count_sum, player_count_min, player_count_max) \
         SELECT $1, md5($1::text || 's' || i)::uuid, b, 5, 100, 20, 20, 150, 30, 30 \
         FROM generate_series(0, 39) i, generate_series(date_bin('5 minutes', now(), \
           timestamptz '2000-01-01') - interval '24 hours', now(), interval '5 minutes') b",
        "INSERT INTO network_five_minutes (account_id, bucket, players) \
         SELECT f.account_id, f.bucket, sum(f.player_count_sum::float8 / f.samples) \
           FILTER (WHERE s.role IS DISTINCT FROM 'proxy') \
         FROM server_five_minutes f \
         LEFT JOIN servers s ON s.account_id = f.account_id AND s.id = f.server_id \
         WHERE f.account_id = $1 GROUP BY 1, 2",
        "INSERT INTO players (account_id, uuid, username, username_at, first_seen, last_seen, \
           rank) \
         SELECT $1, md5($1::text || 'p' || i)::uuid, 'player' || i, now(), \
           now() - interval '9 days', now() - make_interval(mins => i), \
           CASE WHEN i < 3 THEN 'Admin' WHEN i % 5 = 0 THEN 'vip' END \
         FROM generate_series(0, 19999) i",
        "INSERT INTO punishments (account_id, id, player_uuid, type, reason, staff_uuid, \
           staff_name, issued_at) \
         SELECT $1, gen_random_uuid(), md5($1::text || 'p' || (i % 20000))::uuid, 'kick', 'x', \
           md5($1::text || 'p' || (i % 4))::uuid, 'player' || (i % 4), \
           now() - make_interval(mins => i * 10) \
         FROM generate_series(1, 4000) i",
        "INSERT INTO sessions (account_id, id, player_uuid, server_id, joined_at, left_at, \
           closed_by, opened_seq) \
         SELECT $1, gen_random_uuid(), md5($1::text || 'p' || (i % 20000))::uuid, \
           md5($1::text || 's' || (i % 40))::uuid, now() - make_interval(mins => i + 30), \
           now() - make_interval(mins => i), 'quit', i \
         FROM generate_series(1, 20000) i",
        "INSERT INTO sessions (account_id, id, player_uuid, server_id, joined_at, opened_seq) \
         SELECT $1, gen_random_uuid(), md5($1::text || 'p' || i)::uuid, \
           md5($1::text || 's' || (1 + i))::uuid, now() - interval '5 minutes', 30000 + i \
         FROM generate_series(0, 499) i",
        "INSERT INTO events (account_id, id, seq, name, is_internal, player_uuid, server_id, \
           properties, occurred_at, received_at) \
         SELECT $1, gen_random_uuid(), i, \
           (ARRAY['session_join', 'session_quit', 'punish_ban', 'punish_mute', 'punish_kick', \
                  'punish_warning', 'punish_revoke', 'rank_change', 'quest_done'])[1 + i % 9], \
           i % 9 = 8, md5($1::text || 'p' || (i % 20000))::uuid, \
           md5($1::text || 's' || (i % 40))::uuid, \
           json_build_object('player_name', 'player' || (i % 20000), 'reason', 'r'), \
           now() - make_interval(secs => i), now() \
         FROM generate_series(1, 20000) i",
        "INSERT INTO anticheat_flags (account_id, id, player_uuid, server_id, check_name, \
           check_type, violation_level, flagged_at) \
         SELECT $1, gen_random_uuid(), md5($1::text || 'p' || (i % 20000))::uuid, \
           md5($1::text || 's' || (i % 40))::uuid, 'Reach', 'A', 1, \
           now() - make_interval(secs => i * 3) \
         FROM generate_series(1, 3000) i",
    ];
    for statement in statements {
        sqlx::query(statement).bind(account).execute(pool).await?;
    }
    keep_recent_activity(pool, account).await?;
    sqlx::query("ANALYZE").execute(pool).await?;
    Ok(())
}

#[tokio::test]
async fn every_overview_statement_reads_a_bounded_number_of_rows() -> anyhow::Result<()> {
    let dash = Dashboard::start().await?;
    let (pool, account) = (dash.pool(), dash.account);
    large_dataset(pool, account).await?;
    let mut conn = pool.acquire().await?;
    // Parallel workers would split a scan's loops; one process keeps the counts exact.
    sqlx::query("SET max_parallel_workers_per_gather = 0")
        .execute(&mut *conn)
        .await?;
    let explain_of = |sql: &str| format!("EXPLAIN (ANALYZE, FORMAT JSON) {sql}");
    let to = now().duration_trunc(Duration::minutes(5))? + Duration::minutes(5);
    let staff_groups = vec!["admin".to_owned()];

    let servers_sql = explain_of(&server_statuses_sql());
    let roster = explain_of(&roster_sql());
    let network = explain_of(NETWORK_SQL);
    let activity = explain_of(ACTIVITY_SQL);
    let reads = [
        (
            "server statuses",
            explain(
                &mut conn,
                sqlx::query_scalar(&servers_sql)
                    .bind(account)
                    .bind(180.0_f64),
            )
            .await?,
        ),
        (
            "staff roster",
            explain(
                &mut conn,
                sqlx::query_scalar(&roster)
                    .bind(account)
                    .bind(180.0_f64)
                    .bind(&staff_groups),
            )
            .await?,
        ),
        (
            "network chart",
            explain(
                &mut conn,
                sqlx::query_scalar(&network)
                    .bind(account)
                    .bind(to - NETWORK_SPAN)
                    .bind(to),
            )
            .await?,
        ),
        (
            "activity",
            explain(
                &mut conn,
                sqlx::query_scalar(&activity)
                    .bind(account)
                    .bind(ACTIVITY_LIMIT),
            )
            .await?,
        ),
    ];
    for (part, (rows, scans)) in &reads {
        assert!(
            *rows <= ROWS_READ_BOUND,
            "the Overview's {part} read {rows} rows (bound {ROWS_READ_BOUND}): {scans:#?}"
        );
    }

    // The activity list reads the projector's small copies, never the timeline or the flags.
    let (_, activity_scans) = &reads[3].1;
    assert!(
        activity_scans
            .iter()
            .all(|scan| !scan.contains(" on events ") && !scan.contains(" on anticheat_flags ")),
        "the activity list read a large table: {activity_scans:#?}"
    );

    // And what it reads is what it shows: 288 buckets, the proxy left out of each.
    let body = dash.ok("/api/overview").await?;
    let network = body["network"].as_array().expect("network");
    assert_eq!(network.len(), 288);
    let shown: Vec<f64> = network
        .iter()
        .filter_map(|p| p["players"].as_f64())
        .collect();
    // The last bucket may have begun after the dataset was written.
    assert!(shown.len() >= 287, "{} buckets with players", shown.len());
    assert!(shown.iter().all(|p| *p == 39.0 * 30.0), "{shown:?}");
    let staff: Vec<&str> = body["staff_online"]
        .as_array()
        .expect("staff_online")
        .iter()
        .filter_map(|m| m["username"].as_str())
        .collect();
    assert_eq!(staff, ["player0", "player1", "player2", "player3"]);
    Ok(())
}
