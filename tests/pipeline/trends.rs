//! `POST /api/v1/trends` over events written through the pipeline with explicit times: every
//! expected number below is counted by hand from the events listed in `seed`.

use pipeline_tests::{TestAccount, TestStack};
use reqwest::Method;
use serde_json::{Value, json};

const P1: &str = "069a79f4-44e9-4726-a5be-fca90e38aaf5";
const P2: &str = "853c80ef-3c37-49fd-aa49-938b674adae6";
const P3: &str = "61699b2e-d327-4a01-9f1e-0ea8c3f06bc6";
const S1: &str = "7d6b4c0e-1d1f-4f7e-9a53-8c1f3f3c2a10";
const S2: &str = "1a2b3c4d-0000-4000-8000-00000000beef";

/// The events, in UTC days. Current range: 2026-10-05..08 (Mon..Wed); previous: 10-02..05.
pub(crate) async fn seed(stack: &TestStack, account: &TestAccount) {
    let quest = |player: &str, at: &str, map: Option<&str>| {
        let mut event =
            json!({"player_uuid": player, "name": "quest_completed", "occurred_at": at});
        if let Some(map) = map {
            event["properties"] = json!({"map": map});
        }
        event
    };
    let mut events = vec![
        quest(P2, "2026-10-02T05:00:00Z", Some("a")), // previous, day 1
        quest(P1, "2026-10-04T23:59:59Z", Some("a")), // previous, day 3: the last second
        quest(P1, "2026-10-05T00:00:00Z", Some("a")), // current day 1: its first second
        quest(P1, "2026-10-05T12:00:00+02:00", Some("a")), // 10:00Z, day 1, P1 again
        quest(P2, "2026-10-05T23:30:00-01:00", Some("b")), // 00:30Z on day 2
        quest(P3, "2026-10-07T08:00:00Z", Some("b")), // day 3
        quest(P1, "2026-10-07T09:00:00Z", None),      // day 3, no map: "other"
        quest(P1, "2026-10-08T00:00:00Z", Some("a")), // past the range's end (same ISO week)
    ];
    // 12 tiers on day 2: t01..t10 twice each, t11 and t12 once: the top 10 and "other" 2.
    for tier in 1..=12 {
        let times = if tier <= 10 { 2 } else { 1 };
        for _ in 0..times {
            events.push(json!({"player_uuid": P1, "name": "crate_opened",
                "properties": {"tier": format!("t{tier:02}")}, "occurred_at": "2026-10-06T12:00:00Z"}));
        }
    }
    let (status, body) = stack
        .call(
            Method::POST,
            "/api/v1/plugin/events",
            &account.plugin_key,
            Some(Value::Array(events)),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    let join = |server: &str, player: &str, at: &str| json!({"server_id": server, "player_uuid": player, "player_name": "p", "event": "join", "at": at});
    let (status, body) = stack
        .call(
            Method::POST,
            "/api/plugin/sessions",
            &account.plugin_key,
            Some(json!([
                join(S1, P1, "2026-10-05T10:00:00Z"),
                join(S1, P1, "2026-10-05T11:00:00Z"),
                join(S2, P2, "2026-10-06T10:00:00Z"),
            ])),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    let (status, body) = stack
        .call(
            Method::POST,
            "/api/plugin/anticheat-flags",
            &account.plugin_key,
            Some(
                json!({"server_id": S2, "player_uuid": P3, "check_name": "Speed",
                "violation_level": 3.0, "flagged_at": "2026-10-07T23:00:00Z"}),
            ),
        )
        .await;
    assert_eq!(status, 202, "{body}");
}

async fn trend(stack: &TestStack, key: &str, body: Value) -> Value {
    let (status, answer) = stack
        .call(Method::POST, "/api/v1/trends", key, Some(body))
        .await;
    assert_eq!(status, 200, "{answer}");
    answer
}

/// (label, values, total) of each series.
fn lines(answer: &Value) -> Vec<(String, Value, i64)> {
    answer["series"]
        .as_array()
        .expect("series")
        .iter()
        .map(|s| {
            (
                s["label"].as_str().unwrap_or("").to_owned(),
                s["values"].clone(),
                s["total"].as_i64().unwrap_or(-1),
            )
        })
        .collect()
}

fn range(extra: Value) -> Value {
    let mut body = json!({"what": {"event": "quest_completed"}, "bucket": "day",
        "from": "2026-10-05T00:00:00Z", "to": "2026-10-08T00:00:00Z"});
    if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
        body.extend(extra.clone());
    }
    body
}

#[tokio::test]
async fn trends_count_by_utc_bucket_unique_breakdown_and_previous_period() {
    let stack = TestStack::start().await.expect("stack starts");
    let account = stack
        .create_account("Trends Network")
        .await
        .expect("account");
    let other = stack
        .create_account("Other Network")
        .await
        .expect("account");
    seed(&stack, &account).await;
    // Another account's events of the same name on the same days count for it alone.
    let (status, _) = stack
        .call(Method::POST, "/api/v1/plugin/events", &other.plugin_key,
            Some(json!({"player_uuid": P3, "name": "quest_completed", "occurred_at": "2026-10-05T01:00:00Z"})))
        .await;
    assert_eq!(status, 202);
    stack.projected().await.expect("the projector catches up");
    let key = &account.dashboard_key;

    // Totals and the previous period (10-02, 10-03, 10-04), bucket edges in UTC.
    let answer = trend(&stack, key, range(json!({"compare": true}))).await;
    assert_eq!(
        answer["buckets"],
        json!([
            "2026-10-05T00:00:00Z",
            "2026-10-06T00:00:00Z",
            "2026-10-07T00:00:00Z"
        ])
    );
    assert_eq!(answer["previous_from"], "2026-10-02T00:00:00Z");
    let series = &answer["series"][0];
    assert_eq!(series["label"], "quest_completed");
    assert_eq!(series["values"], json!([2, 1, 2]));
    assert_eq!(series["total"], 5);
    assert_eq!(series["previous_values"], json!([1, 0, 1]));
    assert_eq!(series["previous_total"], 2);

    // Unique (from the day counts): P1 twice on 10-05 counts once. A unique series has no
    // total (-1 here): distinct players over a range are not the sum of its buckets.
    let answer = trend(
        &stack,
        key,
        range(json!({"measure": "unique", "compare": true})),
    )
    .await;
    assert_eq!(
        lines(&answer),
        [("quest_completed".to_owned(), json!([1, 1, 2]), -1)]
    );
    assert_eq!(answer["series"][0]["previous_values"], json!([1, 0, 1]));
    assert_eq!(answer["series"][0]["previous_total"], Value::Null);

    // ISO weeks: from Sunday 10-04 widens to Monday 09-28; 10-08 is in the week of 10-05.
    let answer = trend(
        &stack,
        key,
        range(json!({"bucket": "week", "from": "2026-10-04T00:00:00Z"})),
    )
    .await;
    assert_eq!(answer["from"], "2026-09-28T00:00:00Z");
    assert_eq!(answer["to"], "2026-10-12T00:00:00Z");
    assert_eq!(
        lines(&answer),
        [("quest_completed".to_owned(), json!([2, 6]), 8)]
    );
    // Unique per ISO week (from the player-day sets): P1 and P2 in the first, all three after.
    let answer = trend(
        &stack,
        key,
        range(json!({"bucket": "week", "from": "2026-10-04T00:00:00Z", "measure": "unique"})),
    )
    .await;
    assert_eq!(
        lines(&answer),
        [("quest_completed".to_owned(), json!([2, 3]), -1)]
    );

    // Hours (read from the raw events): 00:00 and 10:00 on 10-05.
    let answer = trend(
        &stack,
        key,
        range(json!({"bucket": "hour", "to": "2026-10-05T11:30:00Z", "measure": "unique"})),
    )
    .await;
    let mut hours = vec![0; 12];
    hours[0] = 1;
    hours[10] = 1;
    assert_eq!(
        lines(&answer),
        [("quest_completed".to_owned(), json!(hours), -1)]
    );

    // A property: a and b tie at 2 (by value), the event without one is "other".
    let answer = trend(
        &stack,
        key,
        range(json!({"breakdown": {"property": "map"}, "compare": true})),
    )
    .await;
    assert_eq!(
        lines(&answer),
        [
            ("a".to_owned(), json!([2, 0, 0]), 2),
            ("b".to_owned(), json!([0, 1, 1]), 2),
            ("other".to_owned(), json!([0, 0, 1]), 1),
        ]
    );
    assert_eq!(answer["series"][0]["previous_values"], json!([1, 0, 1]));
    assert_eq!(answer["series"][2]["other"], true);

    // Top 10 plus other: t11 and t12 (one each) fall into "other".
    let answer = trend(
        &stack,
        key,
        range(json!({"what": {"event": "crate_opened"}, "breakdown": {"property": "tier"}})),
    )
    .await;
    let found = lines(&answer);
    let labels: Vec<&str> = found.iter().map(|(l, _, _)| l.as_str()).collect();
    assert_eq!(
        labels,
        [
            "t01", "t02", "t03", "t04", "t05", "t06", "t07", "t08", "t09", "t10", "other"
        ]
    );
    assert!(
        found
            .iter()
            .all(|(_, values, total)| *values == json!([0, 2, 0]) && *total == 2),
        "{found:?}"
    );

    // Joins by server, totals and unique; custom events have no server.
    let joins = |extra: Value| {
        let mut body = range(extra);
        body["what"] = json!({"kind": "joins"});
        body
    };
    let answer = trend(&stack, key, joins(json!({"breakdown": "server"}))).await;
    assert_eq!(
        lines(&answer),
        [
            (S1.to_owned(), json!([2, 0, 0]), 2),
            (S2.to_owned(), json!([0, 1, 0]), 1)
        ]
    );
    let answer = trend(
        &stack,
        key,
        joins(json!({"breakdown": "server", "measure": "unique"})),
    )
    .await;
    // A tie (one player each) is ordered by key.
    assert_eq!(
        lines(&answer),
        [
            (S2.to_owned(), json!([0, 1, 0]), -1),
            (S1.to_owned(), json!([1, 0, 0]), -1)
        ]
    );
    let answer = trend(&stack, key, range(json!({"breakdown": "server"}))).await;
    assert_eq!(
        lines(&answer),
        [("no server".to_owned(), json!([2, 1, 2]), 5)]
    );
    let answer = trend(&stack, key, range(json!({"what": {"kind": "flags"}}))).await;
    assert_eq!(
        lines(&answer),
        [("anti-cheat flags".to_owned(), json!([0, 0, 1]), 1)]
    );
    // A flag's check stands for its property.
    let answer = trend(
        &stack,
        key,
        range(json!({"what": {"kind": "flags"}, "breakdown": {"property": "check_name"}})),
    )
    .await;
    assert_eq!(lines(&answer), [("Speed".to_owned(), json!([0, 0, 1]), 1)]);

    // Tenancy: the other account sees its one event, and the first account's numbers above
    // did not include it.
    let answer = trend(&stack, &other.dashboard_key, range(json!({}))).await;
    assert_eq!(
        lines(&answer),
        [("quest_completed".to_owned(), json!([1, 0, 0]), 1)]
    );
}

#[tokio::test]
async fn bad_trend_requests_are_422_problems() {
    let stack = TestStack::start().await.expect("stack starts");
    let account = stack
        .create_account("Trends Network")
        .await
        .expect("account");
    let cases = [
        (json!({"what": {"event": "Not A Name"}}), "what.event"),
        (
            json!({"what": {"kind": "joins"}, "breakdown": {"property": ""}}),
            "breakdown.property",
        ),
        (
            json!({"what": {"kind": "joins"}, "bucket": "hour", "from": "2026-01-01T00:00:00Z", "to": "2026-03-01T00:00:00Z"}),
            "to",
        ),
        (
            json!({"what": {"kind": "joins"}, "from": "2026-03-01T00:00:00Z", "to": "2026-01-01T00:00:00Z"}),
            "from",
        ),
        (
            json!({"what": {"kind": "joins"}, "from": "1969-12-31T00:00:00Z"}),
            "from",
        ),
    ];
    for (body, field) in cases {
        let (status, problem) = stack
            .call(
                Method::POST,
                "/api/v1/trends",
                &account.dashboard_key,
                Some(body.clone()),
            )
            .await;
        assert_eq!(status, 422, "{body} -> {problem}");
        assert_eq!(problem["errors"][0]["field"], field, "{body} -> {problem}");
    }
    // Bodies of another shape: 400 problems, never a 5xx.
    for body in [
        json!({}),
        json!({"what": {"kind": "nope"}}),
        json!({"what": {"event": "a"}, "extra": 1}),
        json!({"what": {"event": "a", "kind": "joins"}}),
        json!({"what": {"event": "a"}, "breakdown": {"property": "x", "limit": 3}}),
        json!([]),
    ] {
        let (status, problem) = stack
            .call(
                Method::POST,
                "/api/v1/trends",
                &account.dashboard_key,
                Some(body.clone()),
            )
            .await;
        assert_eq!(status, 400, "{body} -> {problem}");
        assert!(problem["code"].is_string(), "{problem}");
    }
    // A plugin key may not read.
    let (status, _) = stack
        .call(
            Method::POST,
            "/api/v1/trends",
            &account.plugin_key,
            Some(json!({"what": {"kind": "joins"}})),
        )
        .await;
    assert_eq!(status, 403);
}
