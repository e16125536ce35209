//! Funnels through the endpoint: counts, conversions and medians over real PostgreSQL reads.
//! The walk's rules are unit- and property-tested in `query-api/src/funnel/journey`.

use crate::helpers::TestApp;
use chrono::{DateTime, Duration, Utc};
use serde_json::{Value, json};
use sqlx::PgPool;
use uuid::Uuid;

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
    // Players in both halves of the id space, so both of the two parallel slices count some.
    let (p1, p2, p3) = (
        Uuid::now_v7(),
        Uuid::max(),
        Uuid::from_u128(u128::MAX / 2 + 1),
    );
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

    // Strict: p1's session_join (internal) does not break quest_completed -> shop_purchase,
    // a custom event between them does.
    let strict =
        json!({"steps": ["quest_started", "quest_completed", "shop_purchase"], "order": "strict"});
    let players = |result: &Value| -> Vec<i64> {
        result["steps"]
            .as_array()
            .expect("steps")
            .iter()
            .map(|s| s["players"].as_i64().expect("players"))
            .collect()
    };
    let funnel = |body: Value| {
        let request = app
            .client
            .post(app.url("/api/v1/funnels"))
            .bearer_auth(&key)
            .json(&body);
        async move {
            request
                .send()
                .await
                .expect("sent")
                .json::<Value>()
                .await
                .expect("json")
        }
    };
    assert_eq!(players(&funnel(strict.clone()).await), [3, 2, 1]);
    insert_event(
        pool,
        &account,
        2000,
        p1,
        "crate_opened",
        t + Duration::seconds(100),
    )
    .await;
    assert_eq!(players(&funnel(strict).await), [3, 2, 0]);
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
