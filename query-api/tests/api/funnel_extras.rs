//! The funnel's extras through the endpoint, against hand-computed expectations: time to
//! convert (median for an even and an odd number of players, bucket edges), the breakdown by
//! a property of step 1 (with "other" and "(none)"), the drop-off lists per order with their
//! paging, and that another account's events count nowhere.

use crate::helpers::TestApp;
use chrono::{DateTime, Duration, Utc};
use serde_json::{Value, json};
use sqlx::PgPool;
use uuid::Uuid;

/// One event of `account` with `properties` (JSON text).
async fn insert(
    pool: &PgPool,
    account: &str,
    player: Uuid,
    name: &str,
    at: DateTime<Utc>,
    properties: &str,
) {
    sqlx::query(
        "INSERT INTO events (account_id, id, seq, name, is_internal, player_uuid, properties, occurred_at, received_at) \
         VALUES ($1::uuid, $2, nextval('funnel_extras_seq'), $3, false, $4, $5::json, $6, $6)",
    )
    .bind(account)
    .bind(Uuid::now_v7())
    .bind(name)
    .bind(player)
    .bind(properties)
    .bind(at)
    .execute(pool)
    .await
    .expect("insert event");
}

const STEPS: [&str; 3] = ["quest_started", "quest_completed", "reward_claimed"];

fn column(result: &Value, step: usize, field: &str) -> Value {
    result["steps"][step][field].clone()
}

fn buckets(result: &Value, step: usize) -> Vec<i64> {
    result["steps"][step]["time_to_convert"]
        .as_array()
        .expect("buckets")
        .iter()
        .map(|b| b["players"].as_i64().expect("players"))
        .collect()
}

fn dropped(result: &Value) -> Vec<Uuid> {
    result["dropped_off"]["players"]
        .as_array()
        .expect("players")
        .iter()
        .map(|p| {
            p["player_uuid"]
                .as_str()
                .expect("uuid")
                .parse()
                .expect("a uuid")
        })
        .collect()
}

#[tokio::test]
async fn time_to_convert_breakdown_and_drop_offs_match_hand_computed_values() {
    let app = TestApp::spawn().await.expect("app");
    let (account, key) = app.account_with_dashboard_key().await.expect("account");
    let (other, _) = app.account_with_dashboard_key().await.expect("other");
    let key = key["key"].as_str().expect("secret").to_owned();
    let pool = &app.db.pool;
    sqlx::query("CREATE SEQUENCE funnel_extras_seq")
        .execute(pool)
        .await
        .expect("sequence");
    // Whole seconds, so that the times compare exactly after PostgreSQL's microseconds.
    let t0 = DateTime::<Utc>::from_timestamp((Utc::now() - Duration::hours(2)).timestamp(), 0)
        .expect("a time");
    let at = |seconds: i64| t0 + Duration::seconds(seconds);
    // Ids in both halves of the id space (both parallel slices), in a known order.
    let p1 = Uuid::from_u128(3);
    let p2 = Uuid::from_u128(u128::MAX - 5);
    let p3 = Uuid::from_u128(u128::MAX / 2 + 10);
    let p4 = Uuid::from_u128(5);
    let p5 = Uuid::from_u128(7);
    let p6 = Uuid::from_u128(u128::MAX - 1);
    let journeys: [(Uuid, &str, i64, &str); 14] = [
        (p1, "quest_started", 0, r#"{"region":"eu"}"#),
        (p1, "quest_completed", 30, "{}"),
        (p1, "crate_opened", 60, "{}"), // breaks the chain in strict order only
        (p1, "reward_claimed", 90, "{}"),
        (p2, "quest_started", 0, r#"{"region":"eu"}"#),
        (p2, "reward_claimed", 30, "{}"), // before step 2: counts in `any` order only
        (p2, "quest_completed", 60, "{}"), // exactly 1 min: the 1m-10m bucket
        (p3, "quest_started", 0, r#"{"region":"us"}"#),
        (p3, "quest_completed", 600, "{}"), // exactly 10 min: 10m-1h
        (p3, "reward_claimed", 3600, "{}"), // exactly 1 h: 1h-1d
        (p4, "quest_started", 0, r#"{"level":3}"#), // no region: "(none)"
        (p5, "quest_started", 0, r#"{"region":null}"#), // null region: "(none)" too
        (p5, "quest_completed", 120, "{}"),
        (p5, "session_note", 121, "{}"),
    ];
    for (player, name, offset, properties) in journeys {
        insert(pool, &account, player, name, at(offset), properties).await;
    }
    // Another account: the same ids and a region of its own; none of it may show.
    for (player, name, offset) in [
        (Uuid::from_u128(4), "quest_started", 0),
        (p4, "quest_started", 0),
        (p4, "quest_completed", 1),
    ] {
        insert(
            pool,
            &other,
            player,
            name,
            at(offset),
            r#"{"region":"asia"}"#,
        )
        .await;
    }
    let funnel = |extra: Value| {
        let mut body = json!({"steps": STEPS, "window_seconds": 86_400});
        for (field, value) in extra.as_object().expect("an object") {
            body[field] = value.clone();
        }
        let request = app
            .client
            .post(app.url("/api/v1/funnels"))
            .bearer_auth(&key)
            .json(&body);
        async move {
            let response = request.send().await.expect("sent");
            assert_eq!(response.status(), 200, "{body}");
            response.json::<Value>().await.expect("json")
        }
    };

    // Five players: an even number reached step 2 (4) and step 3 (2).
    let result = funnel(json!({})).await;
    let players: Vec<Value> = (0..3).map(|k| column(&result, k, "players")).collect();
    assert_eq!(players, [json!(5), json!(4), json!(2)]);
    // Step 2 from step 1: p1 30 s, p2 60 s, p5 120 s, p3 600 s: (60 + 120) / 2.
    assert_eq!(column(&result, 1, "median_seconds_from_start"), 90.0);
    assert_eq!(buckets(&result, 1), [1, 2, 1, 0, 0, 0]);
    // Step 3 from step 1: p1 90 s, p3 3600 s.
    assert_eq!(column(&result, 2, "median_seconds_from_start"), 1845.0);
    assert_eq!(buckets(&result, 2), [0, 1, 0, 1, 0, 0]);
    assert_eq!(column(&result, 0, "median_seconds_from_start"), Value::Null);
    assert_eq!(buckets(&result, 0), Vec::<i64>::new());
    assert_eq!(result["breakdown"], Value::Null);
    assert_eq!(result["dropped_off"], Value::Null);
    let edges: Vec<(Value, Value)> = result["steps"][1]["time_to_convert"]
        .as_array()
        .expect("buckets")
        .iter()
        .map(|b| (b["min_seconds"].clone(), b["max_seconds"].clone()))
        .collect();
    assert_eq!(edges[1], (json!(60), json!(600)));
    assert_eq!(edges[5], (json!(604_800), Value::Null));

    // A sixth player makes the counts odd.
    insert(
        pool,
        &account,
        p6,
        "quest_started",
        at(0),
        r#"{"region":"us"}"#,
    )
    .await;
    insert(pool, &account, p6, "quest_completed", at(5), "{}").await;
    insert(pool, &account, p6, "reward_claimed", at(10), "{}").await;
    let result = funnel(json!({
        "breakdown": {"property": "region", "limit": 1},
        "dropped_off": {"step": 2},
    }))
    .await;
    // 5, 30, 60, 120, 600 s and 10, 90, 3600 s.
    assert_eq!(column(&result, 1, "median_seconds_from_start"), 60.0);
    assert_eq!(buckets(&result, 1), [2, 2, 1, 0, 0, 0]);
    assert_eq!(column(&result, 2, "median_seconds_from_start"), 90.0);
    assert_eq!(buckets(&result, 2), [1, 1, 0, 1, 0, 0]);
    // eu (p1, p2) and us (p3, p6) both have 2 entries: eu first by value, us is "other";
    // p4 (no region) and p5 (null) are "none".
    assert_eq!(
        result["breakdown"],
        json!({"property": "region", "rows": [
            {"group": "value", "value": "eu", "players": [2, 2, 1]},
            {"group": "other", "value": null, "players": [2, 2, 2]},
            {"group": "none", "value": null, "players": [2, 1, 0]},
        ]})
    );
    let wide = funnel(json!({"breakdown": {"property": "region"}})).await;
    let values: Vec<Value> = wide["breakdown"]["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| r["value"].clone())
        .collect();
    assert_eq!(values, [json!("eu"), json!("us"), Value::Null]);
    // Sequential: p5 and p2 reached step 2 but not 3 (by id: 7 < MAX - 5).
    assert_eq!(dropped(&result), [p5, p2]);
    assert_eq!(result["dropped_off"]["total"], 2);
    assert_eq!(result["dropped_off"]["step"], 2);
    assert_eq!(result["dropped_off"]["next_after"], Value::Null);
    let entered: DateTime<Utc> = result["dropped_off"]["players"][1]["entered_at"]
        .as_str()
        .expect("a time")
        .parse()
        .expect("RFC 3339");
    let last: DateTime<Utc> = result["dropped_off"]["players"][1]["last_step_at"]
        .as_str()
        .expect("a time")
        .parse()
        .expect("RFC 3339");
    assert_eq!((entered, last), (t0, at(60)));

    // Per order. Step 1 only: p4 (the other account's player 4 is not listed).
    let list =
        |order: &str, step: i64| funnel(json!({"order": order, "dropped_off": {"step": step}}));
    assert_eq!(dropped(&list("sequential", 1).await), [p4]);
    // Strict: p2's reward_claimed comes right after its entry, p1's crate_opened breaks it.
    assert_eq!(dropped(&list("strict", 1).await), [p4, p2]);
    assert_eq!(dropped(&list("strict", 2).await), [p1, p5]);
    // Any: p2 reached all three steps (reward before completion).
    assert_eq!(dropped(&list("any", 1).await), [p4]);
    assert_eq!(dropped(&list("any", 2).await), [p5]);

    // Pages of one.
    let first = funnel(json!({"dropped_off": {"step": 2, "limit": 1}})).await;
    assert_eq!(dropped(&first), [p5]);
    assert_eq!(first["dropped_off"]["next_after"], json!(p5.to_string()));
    let second = funnel(json!({"dropped_off": {"step": 2, "limit": 1, "after": p5}})).await;
    assert_eq!(dropped(&second), [p2]);
    assert_eq!(second["dropped_off"]["next_after"], Value::Null);
}

#[tokio::test]
async fn invalid_extras_are_refused_with_their_field() {
    let app = TestApp::spawn().await.expect("app");
    let (_, key) = app.account_with_dashboard_key().await.expect("account");
    let key = key["key"].as_str().expect("secret").to_owned();
    let cases = [
        (json!({"dropped_off": {"step": 2}}), 422, "dropped_off.step"),
        (
            json!({"dropped_off": {"step": 1, "limit": 0}}),
            422,
            "dropped_off.limit",
        ),
        (
            json!({"breakdown": {"property": "it's"}}),
            422,
            "breakdown.property",
        ),
        (
            json!({"breakdown": {"property": "region", "limit": 51}}),
            422,
            "breakdown.limit",
        ),
        (
            json!({"breakdown": {"property": "region", "by": "x"}}),
            400,
            "",
        ),
    ];
    for (extra, status, field) in cases {
        let mut body = json!({"steps": ["quest_started", "quest_completed"]});
        for (name, value) in extra.as_object().expect("an object") {
            body[name] = value.clone();
        }
        let response = app
            .client
            .post(app.url("/api/v1/funnels"))
            .bearer_auth(&key)
            .json(&body)
            .send()
            .await
            .expect("sent");
        assert_eq!(response.status(), status, "{body}");
        let problem: Value = response.json().await.expect("json");
        if status == 422 {
            assert_eq!(problem["errors"][0]["field"], field, "{problem}");
        }
    }
}

#[tokio::test]
async fn the_funnels_page_shows_time_to_convert_breakdown_and_linked_drop_offs()
-> anyhow::Result<()> {
    use crate::browser::{Browser, PASSWORD};
    use reqwest::StatusCode;
    let app = TestApp::spawn().await?;
    let (account, _) = app.account_with_owner("Funnels").await?;
    app.create_member(&account, "vera@funnels.test", "Vera", "viewer")
        .await?;
    let pool = &app.db.pool;
    sqlx::query("CREATE SEQUENCE funnel_extras_seq")
        .execute(pool)
        .await?;
    let t0 = Utc::now() - Duration::hours(1);
    let (stays, leaves) = (Uuid::from_u128(1), Uuid::from_u128(2));
    let region = r#"{"region":"eu <b>"}"#;
    insert(pool, &account, stays, "quest_started", t0, region).await;
    insert(
        pool,
        &account,
        stays,
        "quest_completed",
        t0 + Duration::seconds(90),
        "{}",
    )
    .await;
    insert(pool, &account, leaves, "quest_started", t0, "{}").await;
    let mut viewer = Browser::signed_in(&app, "vera@funnels.test", PASSWORD).await?;
    let form = [
        ("step", "quest_started"),
        ("step", "quest_completed"),
        ("window", "1"),
        ("window_unit", "86400"),
        ("order", "sequential"),
        ("breakdown", "region"),
        ("action", "run"),
    ];
    let response = viewer.post("/funnels", &form).await?;
    assert_eq!(response.status(), StatusCode::OK);
    let page = response.text().await?;
    // Time to convert: one player, 90 s, in the 1m-10m bucket.
    assert!(
        page.contains(r#"<td data-testid="time-median">1.5 min</td>"#),
        "{page}"
    );
    assert!(page.contains("<td>0</td><td>1</td><td>0</td>"), "{page}");
    // The breakdown escapes the value and gives the entry without one its own row.
    assert!(page.contains(r#"data-value="eu &#60;b&#62;""#), "{page}");
    assert!(page.contains(r#"data-value="(none)""#), "{page}");
    // The drop-off list (step 1 by default) links the player who left.
    assert!(
        page.contains(&format!(
            r#"<a href="/players/{leaves}" data-testid="dropped-player">"#
        )),
        "{page}"
    );
    assert!(!page.contains(&format!("/players/{stays}")), "{page}");
    Ok(())
}

#[tokio::test]
async fn the_additions_are_documented() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let doc: Value = app
        .get_with("/api/openapi.json", None)
        .await?
        .json()
        .await?;
    let schemas = &doc["components"]["schemas"];
    if std::env::var_os("PRINT_FUNNEL_SCHEMAS").is_some() {
        for name in [
            "FunnelRequest",
            "DropOffRequest",
            "FunnelResult",
            "FunnelStep",
        ] {
            println!("{name}: {}", schemas[name]);
        }
    }
    let request = &schemas["FunnelRequest"]["properties"];
    assert!(
        request["breakdown"]
            .to_string()
            .contains("BreakdownRequest")
    );
    assert!(
        request["dropped_off"]
            .to_string()
            .contains("DropOffRequest")
    );
    assert_eq!(
        schemas["BreakdownRequest"]["properties"]["property"]["pattern"],
        "^[A-Za-z0-9_.:-]{1,64}$"
    );
    assert_eq!(schemas["DropOffRequest"]["required"], json!(["step"]));
    let result = &schemas["FunnelResult"]["properties"];
    assert!(result["breakdown"].to_string().contains("FunnelBreakdown"));
    assert!(result["dropped_off"].to_string().contains("FunnelDropOff"));
    let step = &schemas["FunnelStep"]["properties"];
    assert!(step["time_to_convert"].to_string().contains("TimeBucket"));
    for name in [
        "FunnelBreakdownRow",
        "BreakdownKind",
        "DroppedOffPlayer",
        "TimeBucket",
    ] {
        assert!(schemas.get(name).is_some(), "{name} is not in the document");
    }
    Ok(())
}
