//! Retention: `POST /api/v1/retention` over an account of 1M players and 10M
//! active days (full plan), p99 <= 500 ms. The days and the per-cohort counts are loaded
//! straight into the active_days model's tables with SQL (the read measures the query, not the
//! load; the counts are what the projector's fold keeps from the same days), then the
//! questions a dashboard asks are timed: daily cohorts of the last 30 days, weekly of 12
//! weeks, monthly of the whole year, on day N and on or after it.

use crate::run::{Bench, phase};
use crate::stats::{Latencies, Measurement};
use crate::timed::WARM_UP;
use serde_json::{Value, json};
use sqlx::PgPool;
use std::time::Instant;
use uuid::Uuid;

/// Days over which first days are spread (a year before today).
const COHORT_DAYS: i64 = 365;
/// Days after the first day in which a player's later active days fall.
const RETURN_WINDOW: i64 = 120;

/// Loads `players` players of `account` with about `active_days` active days in all (day 0
/// and distinct later days), their spans, and both count tables, then VACUUM (ANALYZE).
pub(crate) async fn load(
    pool: &PgPool,
    account: Uuid,
    players: usize,
    active_days: usize,
) -> anyhow::Result<()> {
    let per_player = i64::try_from((active_days / players.max(1)).max(1))?;
    // Player i: first day spread over the last year; later days at pseudo-random offsets in
    // 1..=RETURN_WINDOW (repeats collapse, so slightly under `active_days` in all).
    sqlx::query(
        "INSERT INTO player_active_days (account_id, player_uuid, day)
         SELECT $1, p.player_uuid, p.first_day + d.n
         FROM (SELECT md5($1::text || i::text)::uuid AS player_uuid, i,
                      current_date - $3::int + (i % $3)::int AS first_day
               FROM generate_series(1::bigint, $2) AS i) AS p
         CROSS JOIN LATERAL (
             SELECT DISTINCT CASE WHEN k = 0 THEN 0
                    ELSE 1 + ((p.i * 7919 + k * 104729) % $5)::int END AS n
             FROM generate_series(0, $4 - 1) AS k) AS d",
    )
    .bind(account)
    .bind(i64::try_from(players)?)
    .bind(i32::try_from(COHORT_DAYS)?)
    .bind(per_player)
    .bind(RETURN_WINDOW)
    .execute(pool)
    .await?;
    // Fresh statistics before each join, or the planner takes the new tables for empty and
    // joins them by nested loop (minutes instead of a second).
    sqlx::query("ANALYZE player_active_days")
        .execute(pool)
        .await?;
    for statement in [
        "INSERT INTO player_activity (account_id, player_uuid, first_day, last_day)
         SELECT account_id, player_uuid, min(day), max(day) FROM player_active_days
         WHERE account_id = $1 GROUP BY 1, 2",
        "ANALYZE player_activity",
        "INSERT INTO cohort_returns (account_id, day_number, first_day, players)
         SELECT d.account_id, d.day - a.first_day, a.first_day, count(*)
         FROM player_active_days d
         JOIN player_activity a USING (account_id, player_uuid)
         WHERE d.account_id = $1 GROUP BY 1, 2, 3",
        "INSERT INTO cohort_spans (account_id, first_day, span, players)
         SELECT account_id, first_day, last_day - first_day, count(*) FROM player_activity
         WHERE account_id = $1 GROUP BY 1, 2, 3",
    ] {
        if statement.starts_with("ANALYZE") {
            sqlx::query(statement).execute(pool).await?;
        } else {
            sqlx::query(statement).bind(account).execute(pool).await?;
        }
    }
    sqlx::query(
        "VACUUM (ANALYZE) player_active_days, player_activity, cohort_returns, cohort_spans",
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// The questions, in turn: what the Retention page asks by default and when its period or
/// mode changes.
fn question(turn: usize) -> Value {
    let days = json!([1, 7, 30]);
    match turn % 6 {
        0 => json!({"period": "day", "days": days}),
        1 => json!({"period": "day", "days": days, "mode": "on_or_after"}),
        2 => json!({"period": "week", "days": days}),
        3 => json!({"period": "week", "days": days, "mode": "on_or_after"}),
        4 => json!({"period": "month", "days": [0, 1, 2, 3, 7, 14, 30, 60, 90]}),
        _ => json!({"period": "month", "days": days, "mode": "on_or_after"}),
    }
}

/// Times `count` POSTs (after a warm-up), keys round robin; a non-2xx answer is an error.
pub(crate) async fn measure(
    http: &reqwest::Client,
    base_url: &str,
    keys: &[String],
    count: usize,
) -> Measurement {
    let url = format!("{base_url}/api/v1/retention");
    let key = |turn: usize| keys[turn % keys.len().max(1)].clone();
    for turn in 0..WARM_UP {
        let _ = http
            .post(&url)
            .bearer_auth(key(turn))
            .json(&question(turn))
            .send()
            .await;
    }
    let (mut latencies, mut errors, started) = (Latencies::default(), 0u64, Instant::now());
    for turn in 0..count {
        let request = http
            .post(&url)
            .bearer_auth(key(WARM_UP + turn))
            .json(&question(turn));
        let sent = Instant::now();
        let ok = match request.send().await {
            Ok(r) if r.status().is_success() => r.bytes().await.is_ok(),
            _ => false,
        };
        if ok {
            latencies.push(sent.elapsed())
        } else {
            errors += 1
        }
    }
    Measurement::new(
        "retention",
        "POST /api/v1/retention: daily cohorts of the last 30 days, weekly of 12 weeks, monthly \
         of the year (all players), days 1/7/30 (and 9 days N), on day N and on or after",
        "requests",
        latencies.len() as u64,
        started.elapsed(),
        Some(&latencies),
        errors,
    )
}

/// The retention phase's account: made and loaded (the measurement is [`measure`]).
pub(crate) async fn load_account(b: &mut Bench) -> anyhow::Result<Uuid> {
    let (players, days) = (b.plan.retention_players, b.plan.retention_active_days);
    phase(&format!(
        "retention over {players} players and {days} active days"
    ));
    let account = b.admin.account("bench retention").await?;
    let started = Instant::now();
    load(&b.svc_pool, account, players, days).await?;
    b.report.measurements.push(Measurement::new(
        "retention_load",
        "active days, spans and per-cohort counts loaded with generate_series straight into \
         PostgreSQL, then VACUUM (ANALYZE) (informational: the load is not what is measured)",
        "players",
        players as u64,
        started.elapsed(),
        None,
        0,
    ));
    Ok(account)
}
