//! The events list: tenant isolation, filters, paging, byte-exact properties.

use crate::helpers::{TestApp, error_fields, problem, text};
use chrono::{DateTime, Duration, Utc};
use reqwest::StatusCode;
use serde_json::Value;
use sqlx::PgPool;
use uuid::Uuid;

struct Row<'a> {
    account: &'a str,
    seq: i64,
    name: &'a str,
    internal: bool,
    player: Uuid,
    properties: &'a str,
    occurred_at: DateTime<Utc>,
}

async fn insert(pool: &PgPool, row: Row<'_>) -> anyhow::Result<Uuid> {
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO events (account_id, id, seq, name, is_internal, player_uuid, properties, \
         occurred_at, received_at) VALUES ($1::uuid, $2, $3, $4, $5, $6, $7::json, $8, $8)",
    )
    .bind(row.account)
    .bind(id)
    .bind(row.seq)
    .bind(row.name)
    .bind(row.internal)
    .bind(row.player)
    .bind(row.properties)
    .bind(row.occurred_at)
    .execute(pool)
    .await?;
    Ok(id)
}

fn names(page: &Value) -> Vec<String> {
    page["items"]
        .as_array()
        .map(|items| items.iter().map(|e| text(&e["name"])).collect())
        .unwrap_or_default()
}

#[tokio::test]
async fn events_are_listed_per_account_newest_first_with_filters_and_paging() -> anyhow::Result<()>
{
    let app = TestApp::spawn().await?;
    let (account, key) = app.account_with_dashboard_key().await?;
    let secret = text(&key["key"]);
    let other = app.create_account("Other").await?;
    let (alice, bob) = (Uuid::now_v7(), Uuid::now_v7());
    let t0 = DateTime::parse_from_rfc3339("2025-03-01T12:00:00Z")?.with_timezone(&Utc);
    let exact = r#"{"b": 1.10, "a": [1, {"x": null}], "big": 12345678901234567890}"#;
    let rows = [
        (1_000, "level_up", false, alice, exact, t0),
        (
            2_000,
            "quest_done",
            false,
            bob,
            "{}",
            t0 + Duration::seconds(1),
        ),
        (
            2_001,
            "session_join",
            true,
            alice,
            "{}",
            t0 + Duration::seconds(1),
        ),
        (
            3_000,
            "level_up",
            false,
            bob,
            "{}",
            t0 + Duration::seconds(2),
        ),
        (
            4_000,
            "shop_buy",
            false,
            alice,
            "{}",
            t0 + Duration::seconds(2),
        ),
    ];
    for (seq, name, internal, player, properties, occurred_at) in rows {
        insert(
            &app.db.pool,
            Row {
                account: &account,
                seq,
                name,
                internal,
                player,
                properties,
                occurred_at,
            },
        )
        .await?;
    }
    insert(
        &app.db.pool,
        Row {
            account: &other,
            seq: 5_000,
            name: "level_up",
            internal: false,
            player: alice,
            properties: "{}",
            occurred_at: t0,
        },
    )
    .await?;

    let get = |query: String| {
        let app = &app;
        let secret = secret.clone();
        async move {
            let response = app
                .get_with(&format!("/api/v1/events{query}"), Some(&secret))
                .await?;
            anyhow::Ok(response)
        }
    };
    let page: Value = get(String::new()).await?.json().await?;
    // Ties on occurred_at are broken by seq, descending; internal events and the other
    // account's events are absent.
    assert_eq!(
        names(&page),
        ["shop_buy", "level_up", "quest_done", "level_up"]
    );
    assert!(page["next_cursor"].is_null());
    let raw = get("?name=level_up&player_uuid=".to_owned() + &alice.to_string())
        .await?
        .text()
        .await?;
    assert!(raw.contains(&format!(r#""properties":{exact}"#)), "{raw}");
    let item: Value = serde_json::from_str::<Value>(&raw)?["items"][0].clone();
    for field in [
        "id",
        "seq",
        "name",
        "player_uuid",
        "properties",
        "occurred_at",
        "received_at",
    ] {
        assert!(item.get(field).is_some(), "missing {field}");
    }
    assert_eq!(item["occurred_at"], "2025-03-01T12:00:00Z");

    let page: Value = get("?internal=true".into()).await?.json().await?;
    assert_eq!(names(&page).len(), 5);
    let page: Value = get("?name=level_up&name=quest_done".into())
        .await?
        .json()
        .await?;
    assert_eq!(names(&page), ["level_up", "quest_done", "level_up"]);
    let page: Value = get("?from=2025-03-01T12:00:01Z&to=2025-03-01T12:00:02Z".into())
        .await?
        .json()
        .await?;
    assert_eq!(names(&page), ["quest_done"]);

    // Paging visits every event once, in order.
    let mut seen = Vec::new();
    let mut query = "?internal=true&limit=2".to_owned();
    loop {
        let page: Value = get(query.clone()).await?.json().await?;
        seen.extend(
            page["items"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|e| e["seq"].as_i64()),
        );
        match page["next_cursor"].as_str() {
            Some(cursor) => query = format!("?internal=true&limit=2&cursor={cursor}"),
            None => break,
        }
    }
    assert_eq!(
        seen,
        [
            Some(4_000),
            Some(3_000),
            Some(2_001),
            Some(2_000),
            Some(1_000)
        ]
    );

    let body = problem(
        get("?cursor=garbage".into()).await?,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    )
    .await?;
    assert_eq!(error_fields(&body), ["cursor"]);
    let body = problem(
        get("?limit=0&player_uuid=nope&from=yesterday".into()).await?,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    )
    .await?;
    assert_eq!(error_fields(&body), ["limit", "player_uuid", "from"]);
    Ok(())
}

#[tokio::test]
async fn events_need_a_dashboard_key() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let (account, _) = app.account_with_dashboard_key().await?;
    let plugin = text(&app.create_key(&account, "plugin").await?["key"]);
    let forbidden = app
        .status_becomes(
            "/api/v1/events",
            &plugin,
            StatusCode::FORBIDDEN,
            crate::helpers::WAIT,
        )
        .await?;
    assert!(forbidden);
    let response = app.get_with("/api/v1/events", Some(&app.admin_key)).await?;
    problem(response, StatusCode::FORBIDDEN, "wrong_key_type").await?;
    let response = app.get_with("/api/v1/events", None).await?;
    problem(response, StatusCode::UNAUTHORIZED, "missing_credentials").await?;
    Ok(())
}
