//! A failed query never hands a broken connection to the next request: funnels
//! read by binary COPY, which sqlx does not track like other queries.

use crate::helpers::{TestApp, error_fields, problem, text};
use chrono::{DateTime, Duration, Utc};
use query_api::funnel::{self, FunnelOrder, FunnelSpec};
use reqwest::StatusCode;
use serde_json::{Value, json};
use sqlx::PgPool;
use sqlx::postgres::PgPoolOptions;
use uuid::Uuid;

fn at(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text)
        .expect("a time")
        .with_timezone(&Utc)
}

async fn insert_event(
    pool: &PgPool,
    account: &str,
    seq: i64,
    player: Uuid,
    name: &str,
    occurred_at: DateTime<Utc>,
) -> anyhow::Result<()> {
    sqlx::query(
        "INSERT INTO events (account_id, id, seq, name, is_internal, player_uuid, properties, \
         occurred_at, received_at) VALUES ($1::uuid, $2, $3, $4, false, $5, '{}', $6, $6)",
    )
    .bind(account)
    .bind(Uuid::now_v7())
    .bind(seq)
    .bind(name)
    .bind(player)
    .bind(occurred_at)
    .execute(pool)
    .await?;
    Ok(())
}

/// Connections of the test database left inside a transaction with nothing running.
async fn idle_in_transaction(pool: &PgPool) -> anyhow::Result<i64> {
    Ok(sqlx::query_scalar(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
         AND state LIKE 'idle in transaction%'",
    )
    .fetch_one(pool)
    .await?)
}

#[tokio::test]
async fn a_funnel_ending_past_year_9999_is_a_422_not_a_500() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let (_, key) = app.account_with_dashboard_key().await?;
    let secret = text(&key["key"]);
    let post = |body: Value| {
        app.client
            .post(app.url("/api/v1/funnels"))
            .bearer_auth(&secret)
            .json(&body)
            .send()
    };
    // `to` at the very end of the representable range, with the default window: a 422 naming
    // `to`, not a 500.
    let response = post(json!({"steps": ["a", "b"], "to": "9999-12-31T23:59:59Z"})).await?;
    let body = problem(
        response,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    )
    .await?;
    assert_eq!(error_fields(&body), ["to"], "{body}");
    let response = post(json!({"steps": ["a", "b"], "from": "1969-06-01T00:00:00Z"})).await?;
    let body = problem(
        response,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    )
    .await?;
    assert_eq!(error_fields(&body), ["from"], "{body}");
    // The last range whose window still ends in year 9999 is computed.
    let response = post(json!({"steps": ["a", "b"], "window_seconds": 60,
        "from": "9999-12-01T00:00:00Z", "to": "9999-12-31T23:58:59Z"}))
    .await?;
    assert_eq!(response.status(), StatusCode::OK);
    let body: Value = response.json().await?;
    assert_eq!(body["steps"][0]["players"], 0, "{body}");
    Ok(())
}

/// The same COPY path as the route, with the range check skipped: the statement fails before
/// the copy starts, which once left `ReadyForQuery` unread on a pooled connection, and the
/// next query on it read that instead of its own answer.
#[tokio::test]
async fn a_copy_that_fails_before_it_starts_does_not_poison_the_pool() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    // One connection, so the next query gets whatever the failed funnel gave back.
    let pool = PgPoolOptions::new()
        .max_connections(1)
        .connect(&app.db.url)
        .await?;
    for _ in 0..3 {
        let spec = FunnelSpec {
            steps: vec!["a".to_owned(), "b".to_owned()],
            window_seconds: 7 * 24 * 3600,
            from: at("9999-12-01T00:00:00Z"),
            to: at("9999-12-31T23:59:59Z"),
            order: FunnelOrder::Sequential,
        };
        let failed = funnel::compute(&pool, Uuid::now_v7(), spec, 1).await;
        assert!(failed.is_err(), "year 10000 is no PostgreSQL literal");
        let answer: i32 = sqlx::query_scalar("SELECT 42").fetch_one(&pool).await?;
        assert_eq!(answer, 42);
        assert_eq!(idle_in_transaction(&app.db.pool).await?, 0);
    }
    Ok(())
}

#[tokio::test]
async fn one_accounts_failing_funnels_leave_anothers_reads_whole() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let (victim, victim_key) = app.account_with_dashboard_key().await?;
    let (culprit, culprit_key) = app.account_with_dashboard_key().await?;
    let (victim_key, culprit_key) = (text(&victim_key["key"]), text(&culprit_key["key"]));
    let pool = &app.db.pool;
    let t = Utc::now() - Duration::hours(1);
    let (p1, p2) = (Uuid::now_v7(), Uuid::max());
    for (seq, (account, player, name, offset)) in [
        (&victim, p1, "quest_started", 0),
        (&victim, p1, "quest_completed", 30),
        (&victim, p2, "quest_started", 5),
        (&culprit, p1, "quest_started", 0),
        (&culprit, p2, "quest_completed", 9),
    ]
    .into_iter()
    .enumerate()
    {
        let at = t + Duration::seconds(offset);
        insert_event(pool, account, 1000 + seq as i64, player, name, at).await?;
    }
    let victim_player = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO players (account_id, uuid, username, username_at, first_seen, last_seen) \
         VALUES ($1::uuid, $2, 'Steve', $3, $3, $3)",
    )
    .bind(&victim)
    .bind(victim_player)
    .bind(t)
    .execute(pool)
    .await?;
    // Break one of the culprit's rows in a way the COPY path decodes: a name the funnel's
    // reader cannot take (NULL), seen in strict order, which reads every custom event. The
    // reader then stops in the middle of the COPY, with the rest of it unread on the wire.
    sqlx::query("ALTER TABLE events ALTER COLUMN name DROP NOT NULL")
        .execute(pool)
        .await?;
    insert_event(
        pool,
        &culprit,
        2000,
        p1,
        "quest_started",
        t + Duration::seconds(1),
    )
    .await?;
    sqlx::query("UPDATE events SET name = NULL WHERE account_id = $1::uuid AND seq = 2000")
        .bind(&culprit)
        .execute(pool)
        .await?;

    let funnel = |order: &str| {
        json!({"steps": ["quest_started", "quest_completed"], "window_seconds": 3600,
            "order": order})
    };
    let post_funnel = |key: &str, order: &str| {
        app.client
            .post(app.url("/api/v1/funnels"))
            .bearer_auth(key)
            .json(&funnel(order))
            .send()
    };
    // Interleaved, and concurrent within a round: the culprit's failures must not reach the
    // victim's answers (the dashboard quota is 60 a minute per key: 10 rounds of 3 reads).
    let profile_path = format!("/api/players/{victim_player}");
    for round in 0..10 {
        let (failed, ours, profile, list) = tokio::join!(
            post_funnel(&culprit_key, "strict"),
            post_funnel(&victim_key, "strict"),
            app.get_with(&profile_path, Some(&victim_key)),
            app.get_with("/api/v1/events", Some(&victim_key)),
        );
        assert_eq!(
            failed?.status(),
            StatusCode::INTERNAL_SERVER_ERROR,
            "round {round}"
        );
        let ours = ours?;
        assert_eq!(ours.status(), StatusCode::OK, "round {round}");
        let ours: Value = ours.json().await?;
        assert_eq!(ours["steps"][0]["players"], 2, "round {round}: {ours}");
        assert_eq!(ours["steps"][1]["players"], 1, "round {round}: {ours}");
        assert_eq!(ours["steps"][1]["median_seconds_from_previous"], 30.0);
        let profile = profile?;
        assert_eq!(profile.status(), StatusCode::OK, "round {round}");
        let profile: Value = profile.json().await?;
        assert_eq!(profile["username"], "Steve", "round {round}");
        let list = list?;
        assert_eq!(list.status(), StatusCode::OK, "round {round}");
        let list: Value = list.json().await?;
        let names: Vec<String> = list["items"]
            .as_array()
            .map(|items| items.iter().map(|e| text(&e["name"])).collect())
            .unwrap_or_default();
        assert_eq!(
            names,
            ["quest_completed", "quest_started", "quest_started"],
            "round {round}"
        );
    }
    assert_eq!(idle_in_transaction(pool).await?, 0);
    Ok(())
}
