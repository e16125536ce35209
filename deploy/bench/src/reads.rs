//! Reads on a large dataset: players, chat lines and events written straight into the
//! read-model tables with the projector's UNNEST shapes, then timed through query-api.

use crate::chat_search::dataset_line;
use crate::data::{EVENT_NAMES, player_name};
use crate::stats::{Latencies, Measurement};
use crate::timed::WARM_UP;
use chrono::{Duration as Span, Utc};
use projector::projections::timeline::insert_events;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shared::timeline::TimelineEvent;
use sqlx::PgPool;
use std::time::Instant;
use uuid::Uuid;

/// Rows per INSERT while building the dataset.
const ROWS: usize = 5_000;

/// A player index with a heavy head: a few players say most of the lines (u^3 skew).
fn skewed(rng: &mut impl Rng, players: usize) -> usize {
    let u: f64 = rng.random();
    ((u * u * u) * players as f64) as usize % players.max(1)
}

/// Writes `players` players, `chat` chat lines (spread over the last `chat_days` days) and
/// `events` custom events for `account`; returns the player ids.
pub(crate) async fn build_dataset(
    pool: &PgPool,
    account: Uuid,
    players: usize,
    (chat, chat_days): (usize, i64),
    events: usize,
) -> anyhow::Result<Vec<Uuid>> {
    let mut rng = StdRng::seed_from_u64(3);
    let now = Utc::now();
    let ids: Vec<Uuid> = (0..players).map(|_| Uuid::new_v4()).collect();
    for (n, part) in ids.chunks(ROWS).enumerate() {
        let names: Vec<String> = (0..part.len()).map(|i| player_name(n * ROWS + i)).collect();
        let first: Vec<_> = part
            .iter()
            .map(|_| now - Span::days(rng.random_range(20..60)))
            .collect();
        let last: Vec<_> = part
            .iter()
            .map(|_| now - Span::minutes(rng.random_range(1..40_000)))
            .collect();
        sqlx::query(
            "INSERT INTO players (account_id, uuid, username, username_at, first_seen, last_seen)
             SELECT $1, * FROM UNNEST($2::uuid[], $3::text[], $4::timestamptz[], $4::timestamptz[], $5::timestamptz[])",
        )
        .bind(account).bind(part).bind(&names).bind(&first).bind(&last)
        .execute(pool).await?;
    }
    let servers: Vec<Uuid> = (0..20).map(|_| Uuid::new_v4()).collect();
    let mut written = 0;
    while written < chat {
        let n = ROWS.min(chat - written);
        let player: Vec<Uuid> = (0..n).map(|_| ids[skewed(&mut rng, players)]).collect();
        let server: Vec<Uuid> = (0..n)
            .map(|_| servers[rng.random_range(0..servers.len())])
            .collect();
        let text: Vec<String> = (0..n).map(|_| dataset_line(&mut rng)).collect();
        let at: Vec<_> = (0..n)
            .map(|_| now - Span::seconds(rng.random_range(1..chat_days * 86_400)))
            .collect();
        let id: Vec<Uuid> = (0..n).map(|_| Uuid::new_v4()).collect();
        sqlx::query(
            "INSERT INTO chat_messages (account_id, id, player_uuid, server_id, entry_type, message, channel, sent_at)
             SELECT $1, id, p, s, 'chat', m, 'global', t FROM UNNEST($2::uuid[], $3::uuid[], $4::uuid[], $5::text[], $6::timestamptz[]) AS u(id, p, s, m, t)",
        )
        .bind(account).bind(&id).bind(&player).bind(&server).bind(&text).bind(&at)
        .execute(pool).await?;
        written += n;
    }
    let mut conn = pool.acquire().await?;
    let mut written = 0;
    while written < events {
        let n = 2_000.min(events - written);
        let rows: Vec<TimelineEvent> = (0..n)
            .map(|i| {
                let at = now - Span::seconds(rng.random_range(1..25 * 86_400));
                TimelineEvent {
                    account_id: account,
                    id: Uuid::new_v4(),
                    seq: ((written + i) as i64 + 1) * 1000,
                    name: EVENT_NAMES[skewed(&mut rng, EVENT_NAMES.len())].to_owned(),
                    is_internal: false,
                    player_uuid: Some(ids[skewed(&mut rng, players)]),
                    server_id: Some(servers[rng.random_range(0..servers.len())]),
                    properties: r#"{"tier":"gold"}"#.to_owned(),
                    occurred_at: at,
                    received_at: at,
                }
            })
            .collect();
        insert_events(&mut conn, &rows).await?;
        written += n;
    }
    // What autovacuum reaches in steady state: statistics, and a visibility map that lets the
    // funnel's index-only scan skip the heap.
    sqlx::query("VACUUM (ANALYZE)").execute(pool).await?;
    Ok(ids)
}

/// Builds one request's URL from the run's random numbers.
type UrlFor = Box<dyn Fn(&mut StdRng) -> String>;

/// The timed reads, each sequential (one request at a time) with keys used round robin.
pub(crate) async fn measure_reads(
    http: &reqwest::Client,
    query_url: &str,
    keys: &[String],
    players: &[Uuid],
    per_query: usize,
    funnels: usize,
) -> Vec<Measurement> {
    let mut rng = StdRng::seed_from_u64(5);
    let mut key = 0usize;
    let mut next_key = || {
        key += 1;
        keys[key % keys.len().max(1)].clone()
    };
    let now = Utc::now();
    let from = (now - Span::days(14)).to_rfc3339();
    let to = (now - Span::days(7)).to_rfc3339();
    let mut out = Vec::new();
    let shapes: [(&str, &str, UrlFor); 3] = {
        let base = query_url.to_owned();
        let p = players.to_vec();
        let (b1, p1, b2, p2, b3, p3) = (base.clone(), p.clone(), base.clone(), p.clone(), base, p);
        let (f, t) = (from.clone(), to.clone());
        [
            (
                "player_lookup",
                "GET /api/players/{uuid}, random player",
                Box::new(move |r: &mut StdRng| {
                    format!("{b1}/api/players/{}", p1[skewed(r, p1.len())])
                }),
            ),
            (
                "chatlog_newest_50",
                "GET /api/players/{uuid}/chatlog?limit=50, players weighted by how much they chat",
                Box::new(move |r: &mut StdRng| {
                    format!(
                        "{b2}/api/players/{}/chatlog?limit=50",
                        p2[skewed(r, p2.len())]
                    )
                }),
            ),
            (
                "event_search",
                "GET /api/v1/events filtered by name and a 7-day range, or by player",
                Box::new(move |r: &mut StdRng| {
                    if r.random_bool(0.5) {
                        format!(
                            "{b3}/api/v1/events?name={}&from={}&to={}",
                            EVENT_NAMES[r.random_range(0..EVENT_NAMES.len())],
                            enc(&f),
                            enc(&t)
                        )
                    } else {
                        format!("{b3}/api/v1/events?player_uuid={}", p3[skewed(r, p3.len())])
                    }
                }),
            ),
        ]
    };
    for (name, what, request) in &shapes {
        for _ in 0..WARM_UP {
            let _ = http
                .get(request(&mut rng))
                .bearer_auth(next_key())
                .send()
                .await;
        }
        let (mut latencies, mut errors, started) = (Latencies::default(), 0u64, Instant::now());
        for _ in 0..per_query {
            let url = request(&mut rng);
            let sent = Instant::now();
            let ok = match http.get(url).bearer_auth(next_key()).send().await {
                Ok(r) if r.status().is_success() => r.bytes().await.is_ok(),
                _ => false,
            };
            if ok {
                latencies.push(sent.elapsed())
            } else {
                errors += 1
            }
        }
        out.push(Measurement::new(
            name,
            what,
            "requests",
            latencies.len() as u64,
            started.elapsed(),
            Some(&latencies),
            errors,
        ));
    }
    let body = serde_json::json!({"steps": &EVENT_NAMES[..3], "window_seconds": 7 * 86_400, "from": (now - Span::days(30)).to_rfc3339(), "to": now.to_rfc3339()});
    let (mut latencies, mut errors, started) = (Latencies::default(), 0u64, Instant::now());
    for _ in 0..funnels {
        let sent = Instant::now();
        let ok = match http
            .post(format!("{query_url}/api/v1/funnels"))
            .bearer_auth(next_key())
            .json(&body)
            .send()
            .await
        {
            Ok(r) if r.status().is_success() => r.bytes().await.is_ok(),
            _ => false,
        };
        if ok {
            latencies.push(sent.elapsed())
        } else {
            errors += 1
        }
    }
    out.push(Measurement::new(
        "funnel_3_steps",
        "POST /api/v1/funnels, 3 sequential steps over every event of the last 30 days",
        "requests",
        latencies.len() as u64,
        started.elapsed(),
        Some(&latencies),
        errors,
    ));
    out
}

fn enc(text: &str) -> String {
    text.replace('+', "%2B").replace(':', "%3A")
}
