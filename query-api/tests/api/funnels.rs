//! Funnels: the `funnel_progress` function against hand-computed journeys, then the endpoint.

use crate::helpers::TestApp;
use chrono::{DateTime, Duration, TimeZone, Utc};
use serde_json::{Value, json};
use sqlx::PgPool;
use uuid::Uuid;

fn base() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 6, 1, 12, 0, 0)
        .single()
        .expect("time")
}

/// Runs `funnel_progress` on one player's events (`(name, seconds after base)`, in timeline
/// order) and returns the seconds at which each step was reached.
async fn progress(
    pool: &PgPool,
    events: &[(&str, i64)],
    steps: &[&str],
    window: f64,
    mode: &str,
) -> Vec<i64> {
    let codes: Vec<i32> = events
        .iter()
        .map(|(name, _)| {
            steps
                .iter()
                .position(|s| s == name)
                .map_or(0, |p| p as i32 + 1)
        })
        .collect();
    let times: Vec<DateTime<Utc>> = events
        .iter()
        .map(|(_, s)| base() + Duration::seconds(*s))
        .collect();
    let reached: Vec<DateTime<Utc>> =
        sqlx::query_scalar("SELECT funnel_progress($1, $2, $3, $4, $5, $6, $7)")
            .bind(codes)
            .bind(times)
            .bind(steps)
            .bind(window)
            .bind(mode)
            .bind(base() - Duration::hours(1))
            .bind(base() + Duration::days(1))
            .fetch_one(pool)
            .await
            .expect("funnel_progress runs");
    reached
        .iter()
        .map(|t| (*t - base()).num_seconds())
        .collect()
}

#[tokio::test]
async fn journeys_match_hand_computed_results() {
    let app = TestApp::spawn().await.expect("app");
    let pool = &app.db.pool;
    let abc = ["a", "b", "c"];
    let week = 604_800.0;

    // Sequential: other events may come between.
    assert_eq!(
        progress(
            pool,
            &[("a", 0), ("x", 5), ("b", 10), ("c", 20)],
            &abc,
            week,
            "sequential"
        )
        .await,
        [0, 10, 20]
    );
    // Steps out of order do not count in sequence.
    assert_eq!(
        progress(
            pool,
            &[("a", 0), ("c", 5), ("b", 10)],
            &abc,
            week,
            "sequential"
        )
        .await,
        [0, 10]
    );
    // The window bound is inclusive.
    assert_eq!(
        progress(pool, &[("a", 0), ("b", 50)], &abc, 50.0, "sequential").await,
        [0, 50]
    );
    assert_eq!(
        progress(pool, &[("a", 0), ("b", 51)], &abc, 50.0, "sequential").await,
        [0]
    );
    // Re-entry: the first attempt times out, a later entry converts.
    assert_eq!(
        progress(
            pool,
            &[("a", 0), ("a", 1000), ("b", 1010)],
            &abc,
            100.0,
            "sequential"
        )
        .await,
        [1000, 1010]
    );
    // The best entry wins; among equals, the earliest.
    assert_eq!(
        progress(
            pool,
            &[("a", 0), ("b", 5), ("a", 100), ("b", 105)],
            &abc,
            week,
            "sequential"
        )
        .await,
        [0, 5]
    );
    // Strict: any other event between two steps breaks the chain.
    assert_eq!(
        progress(pool, &[("a", 0), ("x", 5), ("b", 10)], &abc, week, "strict").await,
        [0]
    );
    assert_eq!(
        progress(pool, &[("a", 0), ("a", 1), ("b", 2)], &abc, week, "strict").await,
        [1, 2]
    );
    assert_eq!(
        progress(pool, &[("a", 0), ("b", 3), ("c", 4)], &abc, week, "strict").await,
        [0, 3, 4]
    );
    // Any order: step k counts once steps 2..k all happened, at the latest of them.
    assert_eq!(
        progress(pool, &[("a", 0), ("c", 5), ("b", 10)], &abc, week, "any").await,
        [0, 10, 10]
    );
    assert_eq!(
        progress(pool, &[("a", 0), ("c", 5)], &abc, week, "any").await,
        [0]
    );
    // Ties in time keep timeline order.
    assert_eq!(
        progress(pool, &[("a", 0), ("b", 0)], &abc, week, "sequential").await,
        [0, 0]
    );
    assert_eq!(
        progress(pool, &[("b", 0), ("a", 0)], &abc, week, "sequential").await,
        [0]
    );
    // A step name may repeat.
    assert_eq!(
        progress(
            pool,
            &[("a", 0), ("b", 5), ("a", 9)],
            &["a", "b", "a"],
            week,
            "sequential"
        )
        .await,
        [0, 5, 9]
    );
    // Entries outside the range do not count.
    assert_eq!(
        progress(
            pool,
            &[("a", -7200), ("b", -7100)],
            &abc,
            week,
            "sequential"
        )
        .await,
        Vec::<i64>::new()
    );
}

async fn insert_event(
    pool: &PgPool,
    account: &str,
    seq: i64,
    player: Uuid,
    name: &str,
    at: DateTime<Utc>,
) {
    sqlx::query(
        "INSERT INTO events (account_id, id, seq, name, is_internal, player_uuid, properties, occurred_at, received_at) \
         VALUES ($1::uuid, $2, $3, $4, $5, $6, '{}', $7, $7)",
    )
    .bind(account)
    .bind(Uuid::now_v7())
    .bind(seq)
    .bind(name)
    .bind(name.starts_with("session_"))
    .bind(player)
    .bind(at)
    .execute(pool)
    .await
    .expect("insert event");
}

#[tokio::test]
async fn the_endpoint_counts_distinct_players_per_step() {
    let app = TestApp::spawn().await.expect("app");
    let (account, key) = app.account_with_dashboard_key().await.expect("account");
    let (other, _) = app
        .account_with_dashboard_key()
        .await
        .expect("other account");
    let key = key["key"].as_str().expect("secret").to_owned();
    let pool = &app.db.pool;
    let t = Utc::now() - Duration::hours(2);
    let (p1, p2, p3) = (Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7());
    let journeys = [
        (p1, "quest_started", 0),
        (p1, "quest_completed", 60),
        (p1, "session_join", 90),
        (p1, "shop_purchase", 120),
        (p2, "quest_started", 0),
        (p2, "quest_started", 10),
        (p2, "quest_completed", 300),
        (p3, "quest_started", 0),
    ];
    for (seq, (player, name, offset)) in journeys.iter().enumerate() {
        insert_event(
            pool,
            &account,
            seq as i64 + 1000,
            *player,
            name,
            t + Duration::seconds(*offset),
        )
        .await;
    }
    // Another account's identical journey must not count.
    insert_event(
        pool,
        &other,
        5000,
        p3,
        "quest_completed",
        t + Duration::seconds(5),
    )
    .await;

    let body = json!({"steps": ["quest_started", "quest_completed", "shop_purchase"], "window_seconds": 3600});
    let response = app
        .client
        .post(app.url("/api/v1/funnels"))
        .bearer_auth(&key)
        .json(&body)
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), 200);
    let result: Value = response.json().await.expect("json");
    let steps = result["steps"].as_array().expect("steps");
    let players: Vec<i64> = steps
        .iter()
        .map(|s| s["players"].as_i64().expect("players"))
        .collect();
    assert_eq!(players, [3, 2, 1]);
    assert_eq!(steps[0]["conversion_from_previous"], 1.0);
    assert_eq!(
        steps[1]["conversion_from_start"]
            .as_f64()
            .map(|c| (c * 1000.0).round()),
        Some(667.0)
    );
    assert_eq!(steps[2]["conversion_from_previous"], 0.5);
    // p1 took 60 s and p2 300 s (its earliest entry; re-entering at 10 s gets no further).
    assert_eq!(steps[1]["median_seconds_from_previous"], 180.0);
    assert_eq!(steps[2]["median_seconds_from_previous"], 60.0);
    assert_eq!(steps[0]["median_seconds_from_previous"], Value::Null);

    // Internal events may be later steps.
    let body = json!({"steps": ["quest_started", "session_join"], "order": "any"});
    let result: Value = app
        .client
        .post(app.url("/api/v1/funnels"))
        .bearer_auth(&key)
        .json(&body)
        .send()
        .await
        .expect("sent")
        .json()
        .await
        .expect("json");
    assert_eq!(result["steps"][1]["players"], 1);
}

#[tokio::test]
async fn invalid_funnels_are_422() {
    let app = TestApp::spawn().await.expect("app");
    let (_, key) = app.account_with_dashboard_key().await.expect("account");
    let key = key["key"].as_str().expect("secret").to_owned();
    for body in [
        json!({"steps": ["session_join", "quest_started"]}),
        json!({"steps": ["quest_started"]}),
        json!({"steps": ["a", "b"], "window_seconds": 0}),
        json!({"steps": ["a", "b"], "order": "sideways"}),
        json!({"steps": ["a", "b"], "from": "2026-01-02T00:00:00Z", "to": "2026-01-01T00:00:00Z"}),
    ] {
        let response = app
            .client
            .post(app.url("/api/v1/funnels"))
            .bearer_auth(&key)
            .json(&body)
            .send()
            .await
            .expect("sent");
        assert!(
            matches!(response.status().as_u16(), 400 | 422),
            "{body}: {}",
            response.status()
        );
    }
    let response = app
        .client
        .post(app.url("/api/v1/funnels"))
        .bearer_auth(&key)
        .json(&json!({"steps": ["session_join", "quest_started"]}))
        .send()
        .await
        .expect("sent");
    let problem: Value = response.json().await.expect("json");
    assert_eq!(problem["code"], "validation_failed");
    assert_eq!(problem["errors"][0]["code"], "reserved_prefix");
}
