//! The trends target: `POST /api/v1/trends`, a 30-day daily chart (with the
//! previous period) of the busiest event of an account holding `trend_events` events (10M in
//! the full run), every event and unique players.
//!
//! The events are loaded straight into `events` with generate_series (the load is not what is
//! measured), shaped like the read dataset's: 8 names skewed towards the first (half of all
//! events are `quest_started`), 100k players skewed the same way, 20 servers, times spread
//! over the last 30 days. The rollups are then built from them by the statements of
//! migration 0018's backfill, which keep exactly the rows the projector's insert keeps.

use crate::data::EVENT_NAMES;
use crate::run::{Bench, phase};
use crate::stats::{Latencies, Measurement};
use crate::timed::{WARM_UP, keys_for};
use chrono::{Duration as Span, Utc};
use serde_json::{Value, json};
use sqlx::PgPool;
use std::time::Instant;
use uuid::Uuid;

/// Events per INSERT of the load: one statement per million keeps each transaction bounded.
const LOAD_CHUNK: usize = 1_000_000;
/// Players the events are spread over.
const PLAYERS: i64 = 100_000;
/// Servers the events are spread over.
const SERVERS: i64 = 20;

/// The 30-day daily chart, every event: p99 <= 200 ms.
pub(crate) const DAILY: &str = "trend_30d_daily";
/// The same, unique players.
pub(crate) const DAILY_UNIQUE: &str = "trend_30d_daily_unique";

/// The trends phase's account: made and loaded with its events and rollups (the
/// measurement is [`measure`]).
pub(crate) async fn load_account(b: &mut Bench) -> anyhow::Result<Uuid> {
    let events = b.plan.trend_events;
    phase(&format!("trends over {events} events"));
    let account = b.admin.account("bench trends").await?;
    let started = Instant::now();
    load(&b.svc_pool, account, events).await?;
    b.report.measurements.push(Measurement::new(
        "trend_events_load",
        "events loaded with generate_series straight into PostgreSQL, their rollups built by \
         migration 0018's backfill statements, then VACUUM (ANALYZE) (informational: the load \
         is not what is measured)",
        "events",
        events as u64,
        started.elapsed(),
        None,
        0,
    ));
    Ok(account)
}

/// Keys one round of [`measure`] needs for `count` requests per series.
pub(crate) fn keys_needed(count: usize) -> usize {
    keys_for(3 * count + 3 * WARM_UP)
}

/// Times the trend requests, `count` per series, with `keys` of the loaded account.
pub(crate) async fn measure(
    http: &reqwest::Client,
    base_url: &str,
    keys: &[String],
    count: usize,
) -> Vec<Measurement> {
    let series = [
        (
            DAILY,
            "POST /api/v1/trends: the busiest event per UTC day over 30 days, every event, with \
             the previous 30 days",
            json!({}),
        ),
        (
            DAILY_UNIQUE,
            "POST /api/v1/trends: the busiest event per UTC day over 30 days, unique players, \
             with the previous 30 days",
            json!({"measure": "unique"}),
        ),
        (
            "trend_30d_daily_by_server",
            "POST /api/v1/trends: the busiest event per UTC day over 30 days, every event, one \
             series per server (top 10, then other), with the previous 30 days (informational)",
            json!({"breakdown": "server"}),
        ),
    ];
    let mut turn = 0;
    let mut out = Vec::new();
    for (name, what, extra) in series {
        let measured =
            time_posts(http, base_url, keys, &mut turn, (name, what), extra, count).await;
        out.push(measured);
    }
    out
}

/// `events` events of `account` and their rollups, then VACUUM (ANALYZE).
async fn load(pool: &PgPool, account: Uuid, events: usize) -> anyhow::Result<()> {
    let names: Vec<&str> = EVENT_NAMES.to_vec();
    let mut loaded = 0;
    while loaded < events {
        let n = LOAD_CHUNK.min(events - loaded);
        // power(random(), 3) skews towards the first name and the first players, as the read
        // dataset's `skewed` does.
        sqlx::query(
            "INSERT INTO events (account_id, id, seq, name, is_internal, player_uuid, server_id,
                                 properties, occurred_at, received_at)
             SELECT $1, gen_random_uuid(), ($2::bigint + g) * 1000,
                    ($3::text[])[1 + floor(power(random(), 3) * cardinality($3::text[]))::int],
                    false,
                    md5('player' || floor(power(random(), 3) * $4)::bigint)::uuid,
                    md5('server' || floor(random() * $5)::bigint)::uuid,
                    json_build_object('tier', (ARRAY['wood', 'iron', 'gold', 'diamond'])
                        [1 + floor(random() * 4)::int]),
                    now() - random() * interval '30 days', now()
             FROM generate_series(1, $6::bigint) AS g",
        )
        .bind(account)
        .bind(loaded as i64)
        .bind(&names)
        .bind(PLAYERS)
        .bind(SERVERS)
        .bind(n as i64)
        .execute(pool)
        .await?;
        loaded += n;
    }
    // Migration 0018's backfill, for this account.
    for statement in [
        "INSERT INTO event_hours (account_id, name, hour, server_id, events)
         SELECT account_id, name, date_trunc('hour', occurred_at, 'UTC'),
                coalesce(server_id, '00000000-0000-0000-0000-000000000000'), count(*)
         FROM events WHERE account_id = $1
         GROUP BY 1, 2, 3, 4",
        "INSERT INTO event_player_days (account_id, name, day, player_uuid)
         SELECT DISTINCT account_id, name, (occurred_at AT TIME ZONE 'UTC')::date, player_uuid
         FROM events WHERE account_id = $1 AND player_uuid IS NOT NULL",
        "INSERT INTO event_day_players (account_id, name, day, players)
         SELECT account_id, name, day, count(*)
         FROM event_player_days WHERE account_id = $1
         GROUP BY 1, 2, 3",
    ] {
        sqlx::query(statement).bind(account).execute(pool).await?;
    }
    sqlx::query("VACUUM (ANALYZE) events, event_hours, event_player_days, event_day_players")
        .execute(pool)
        .await?;
    Ok(())
}

/// Times `count` trend requests one at a time (after a warm-up), keys round robin: the
/// 30 days before now, per day, of the busiest event, with `extra` fields.
async fn time_posts(
    http: &reqwest::Client,
    base_url: &str,
    keys: &[String],
    turn: &mut usize,
    (name, what): (&str, &str),
    extra: Value,
    count: usize,
) -> Measurement {
    let now = Utc::now();
    let mut body = json!({"what": {"event": EVENT_NAMES[0]}, "bucket": "day",
        "from": (now - Span::days(30)).to_rfc3339(), "to": now.to_rfc3339(), "compare": true});
    if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
        body.extend(extra.clone());
    }
    let mut send = |http: &reqwest::Client| {
        *turn += 1;
        http.post(format!("{base_url}/api/v1/trends"))
            .bearer_auth(&keys[*turn % keys.len().max(1)])
            .json(&body)
            .send()
    };
    for _ in 0..WARM_UP {
        let _ = send(http).await;
    }
    let (mut latencies, mut errors, started) = (Latencies::default(), 0u64, Instant::now());
    for _ in 0..count {
        let sent = Instant::now();
        let ok = match send(http).await {
            Ok(r) if r.status().is_success() => r.bytes().await.is_ok(),
            _ => false,
        };
        if ok {
            latencies.push(sent.elapsed());
        } else {
            errors += 1;
        }
    }
    Measurement::new(
        name,
        what,
        "requests",
        latencies.len() as u64,
        started.elapsed(),
        Some(&latencies),
        errors,
    )
}
