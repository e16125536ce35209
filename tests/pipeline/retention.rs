//! `POST /api/v1/retention` over sessions, chat lines and custom events written through the
//! pipeline with explicit past times: every expected number below is counted by hand from the
//! records in `seed` (UTC days; 2025-03-03 is a Monday).
//!
//! Activity, first day and returns per player:
//! - A: 03-03 23:59 join, 03-04 00:01 quit (day 1), 03-10 twice (day 7, counted once);
//! - B: 03-04 join, 03-05 chat line (day 1), 03-20 (day 16);
//! - C: Sunday 03-09 join and quit (the last day of the week of 03-03), Monday 03-10 (day 1);
//! - D: Friday 02-28 22:00 join (February's last day), 03-01 01:00 quit (day 1), 03-07 (day 7);
//! - E: 03-05 join only; a ban on 03-06 is no activity.
//!
//! Another account has A's uuid on 03-03 and 03-04 and a player of its own: never counted.

use pipeline_tests::{TestAccount, TestStack};
use reqwest::Method;
use serde_json::{Value, json};

pub(crate) const A: &str = "0d6c1e7a-0000-4000-8000-00000000000a";
pub(crate) const B: &str = "0d6c1e7a-0000-4000-8000-00000000000b";
pub(crate) const C: &str = "0d6c1e7a-0000-4000-8000-00000000000c";
const D: &str = "0d6c1e7a-0000-4000-8000-00000000000d";
pub(crate) const E: &str = "0d6c1e7a-0000-4000-8000-00000000000e";
const X: &str = "0d6c1e7a-0000-4000-8000-0000000000ff";
const SERVER: &str = "0d6c1e7a-0000-4000-8000-000000005e55";

fn session(player: &str, event: &str, at: &str) -> Value {
    json!({"server_id": SERVER, "player_uuid": player, "player_name": format!("p{}", &player[34..]),
           "event": event, "at": at})
}

async fn post(stack: &TestStack, account: &TestAccount, path: &str, body: Value) {
    let (status, answer) = stack
        .call(Method::POST, path, &account.plugin_key, Some(body))
        .await;
    assert_eq!(status, 202, "POST {path}: {answer}");
    assert_eq!(answer["rejected"], json!([]), "POST {path}: {answer}");
}

pub(crate) async fn seed(stack: &TestStack, account: &TestAccount, other: &TestAccount) {
    let sessions = json!([
        session(A, "join", "2025-03-03T23:59:00Z"),
        session(A, "quit", "2025-03-04T00:01:00Z"),
        session(A, "join", "2025-03-10T10:00:00Z"),
        session(A, "quit", "2025-03-10T11:00:00Z"),
        session(A, "join", "2025-03-10T18:00:00Z"),
        session(B, "join", "2025-03-04T12:00:00Z"),
        session(B, "join", "2025-03-20T08:00:00Z"),
        session(C, "join", "2025-03-09T23:30:00Z"),
        session(C, "quit", "2025-03-09T23:45:00Z"),
        session(C, "join", "2025-03-10T00:05:00Z"),
        session(D, "join", "2025-02-28T22:00:00Z"),
        session(D, "quit", "2025-03-01T01:00:00Z"),
        session(D, "join", "2025-03-07T20:00:00Z"),
        session(E, "join", "2025-03-05T10:00:00Z"),
    ]);
    post(stack, account, "/api/plugin/sessions", sessions).await;
    post(
        stack,
        account,
        "/api/plugin/chat",
        json!([{"server_id": SERVER, "player_uuid": B, "entry_type": "chat", "message": "hi",
                "sent_at": "2025-03-05T09:00:00Z"}]),
    )
    .await;
    post(
        stack,
        account,
        "/api/plugin/punishments",
        json!([{"server_id": SERVER, "player_uuid": E, "type": "ban", "reason": "x",
                "issued_at": "2025-03-06T09:00:00Z"}]),
    )
    .await;
    let quest = |player: &str, name: &str, at: &str| json!({"player_uuid": player, "name": name, "occurred_at": at});
    // Events: A starts 03-03 and again 03-05, completes 03-04 twice and 03-06; B starts on
    // 03-04's last second and completes on 03-05's first; C starts 03-05 and only completed
    // (03-02) before that.
    post(
        stack,
        account,
        "/api/v1/plugin/events",
        json!([
            quest(A, "quest_started", "2025-03-03T10:00:00Z"),
            quest(A, "quest_completed", "2025-03-04T10:00:00Z"),
            quest(A, "quest_completed", "2025-03-04T11:00:00Z"),
            quest(A, "quest_started", "2025-03-05T10:00:00Z"),
            quest(A, "quest_completed", "2025-03-06T08:00:00Z"),
            quest(B, "quest_started", "2025-03-04T23:59:59Z"),
            quest(B, "quest_completed", "2025-03-05T00:00:01Z"),
            quest(C, "quest_completed", "2025-03-02T10:00:00Z"),
            quest(C, "quest_started", "2025-03-05T10:00:00Z"),
        ]),
    )
    .await;
    post(
        stack,
        other,
        "/api/plugin/sessions",
        json!([
            session(A, "join", "2025-03-03T10:00:00Z"),
            session(A, "join", "2025-03-04T10:00:00Z"),
            session(X, "join", "2025-03-04T10:00:00Z"),
        ]),
    )
    .await;
    post(
        stack,
        other,
        "/api/v1/plugin/events",
        json!([
            quest(A, "quest_started", "2025-03-03T10:00:00Z"),
            quest(X, "quest_started", "2025-03-03T10:00:00Z"),
            quest(X, "quest_completed", "2025-03-03T12:00:00Z"),
        ]),
    )
    .await;
}

async fn retention(stack: &TestStack, account: &TestAccount, body: Value) -> Value {
    let (status, answer) = stack
        .call(
            Method::POST,
            "/api/v1/retention",
            &account.dashboard_key,
            Some(body.clone()),
        )
        .await;
    assert_eq!(status, 200, "{body}: {answer}");
    answer
}

/// Each cohort as (start, size, [returned players per N...]).
fn table(answer: &Value) -> Vec<(String, i64, Vec<i64>)> {
    answer["cohorts"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            (
                c["start"].as_str().unwrap_or_default().to_owned(),
                c["size"].as_i64().unwrap_or(-1),
                c["returned"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|r| r["players"].as_i64().unwrap_or(-1))
                    .collect(),
            )
        })
        .collect()
}

fn row(start: &str, size: i64, returned: &[i64]) -> (String, i64, Vec<i64>) {
    (start.to_owned(), size, returned.to_vec())
}

#[tokio::test]
async fn cohorts_count_utc_days_week_and_month_edges_and_each_return_once() {
    let stack = TestStack::start().await.expect("stack starts");
    let account = stack.create_account("Retention").await.expect("account");
    let other = stack.create_account("Elsewhere").await.expect("account");
    seed(&stack, &account, &other).await;
    stack.projected().await.expect("the projector catches up");

    let days = |mode: &str| {
        json!({"period": "day", "from": "2025-03-03", "to": "2025-03-09", "days": [7, 1],
               "mode": mode})
    };
    let on = retention(&stack, &account, days("on")).await;
    assert_eq!(on["days"], json!([1, 7]), "ascending");
    assert_eq!(
        table(&on),
        [
            row("2025-03-03", 1, &[1, 1]), // A: 23:59 then 00:01 is day 1; 03-10 twice, once
            row("2025-03-04", 1, &[1, 0]), // B: the chat line on day 1
            row("2025-03-05", 1, &[0, 0]), // E: a ban is no return
            row("2025-03-06", 0, &[0, 0]),
            row("2025-03-07", 0, &[0, 0]),
            row("2025-03-08", 0, &[0, 0]),
            row("2025-03-09", 1, &[1, 0]), // C
        ]
    );
    let cell = &on["cohorts"][0]["returned"][1];
    assert_eq!(
        (
            cell["day"].clone(),
            cell["fraction"].clone(),
            cell["complete"].clone()
        ),
        (json!(7), json!(1.0), json!(true))
    );
    assert_eq!(on["cohorts"][0]["end"], "2025-03-03");
    // On or after: B's day 16 counts for day 7 too.
    let after = retention(&stack, &account, days("on_or_after")).await;
    assert_eq!(
        table(&after)
            .into_iter()
            .filter(|r| r.1 > 0)
            .collect::<Vec<_>>(),
        [
            row("2025-03-03", 1, &[1, 1]),
            row("2025-03-04", 1, &[1, 1]),
            row("2025-03-05", 1, &[0, 0]),
            row("2025-03-09", 1, &[1, 0]),
        ]
    );

    // Weeks start on Monday: Sunday's C is in the week of 03-03; a Wednesday `from` snaps back.
    let week = retention(
        &stack,
        &account,
        json!({"period": "week", "from": "2025-03-05", "to": "2025-03-09", "days": [1, 7]}),
    )
    .await;
    assert_eq!(
        (week["from"].clone(), week["to"].clone()),
        (json!("2025-03-03"), json!("2025-03-09"))
    );
    assert_eq!(table(&week), [row("2025-03-03", 4, &[3, 1])]);
    assert_eq!(week["cohorts"][0]["returned"][0]["fraction"], json!(0.75));

    // Months: D's 22:00 on 02-28 is February's; its day 1 is 03-01.
    let month = retention(
        &stack,
        &account,
        json!({"period": "month", "from": "2025-02-10", "to": "2025-03-10", "days": [1, 7]}),
    )
    .await;
    assert_eq!(month["to"], "2025-03-31");
    assert_eq!(
        table(&month),
        [row("2025-02-01", 1, &[1, 1]), row("2025-03-01", 4, &[3, 1])]
    );
    assert_eq!(month["cohorts"][0]["end"], "2025-02-28");

    // The other account sees only its own two players.
    let theirs = retention(
        &stack,
        &other,
        json!({"period": "week", "from": "2025-03-03", "to": "2025-03-09", "days": [1]}),
    )
    .await;
    assert_eq!(table(&theirs), [row("2025-03-03", 2, &[1])]);
}

#[tokio::test]
async fn start_and_return_events_first_time_or_recurring() {
    let stack = TestStack::start().await.expect("stack starts");
    let account = stack.create_account("Quests").await.expect("account");
    let other = stack.create_account("Elsewhere").await.expect("account");
    seed(&stack, &account, &other).await;
    stack.projected().await.expect("the projector catches up");

    let quests = |kind: &str, mode: &str, days: Value| {
        json!({"period": "day", "from": "2025-03-03", "to": "2025-03-05", "days": days,
               "mode": mode,
               "events": {"start": "quest_started", "return": "quest_completed", "kind": kind}})
    };
    // First time: A (03-03), B (03-04 23:59:59, returns 00:00:01 next day), C (03-05).
    let first = retention(&stack, &account, quests("first_time", "on", json!([0, 1]))).await;
    assert_eq!(
        table(&first),
        [
            row("2025-03-03", 1, &[0, 1]),
            row("2025-03-04", 1, &[0, 1]),
            row("2025-03-05", 1, &[0, 0]),
        ]
    );
    // Recurring: A's second start (03-05) is in that day's cohort too, and returns 03-06.
    let recurring = retention(&stack, &account, quests("recurring", "on", json!([0, 1]))).await;
    assert_eq!(
        table(&recurring),
        [
            row("2025-03-03", 1, &[0, 1]),
            row("2025-03-04", 1, &[0, 1]),
            row("2025-03-05", 2, &[0, 1]),
        ]
    );
    // On or after day 3: only A (03-06 is 3 days after 03-03).
    let after = retention(
        &stack,
        &account,
        quests("first_time", "on_or_after", json!([1, 3])),
    )
    .await;
    assert_eq!(
        table(&after),
        [
            row("2025-03-03", 1, &[1, 1]),
            row("2025-03-04", 1, &[1, 0]),
            row("2025-03-05", 1, &[0, 0]),
        ]
    );
    // The other account's quest players are its own.
    let theirs = retention(&stack, &other, quests("first_time", "on", json!([0]))).await;
    assert_eq!(table(&theirs)[0], row("2025-03-03", 2, &[1]));
}

#[tokio::test]
async fn bad_questions_are_422_problems_naming_each_field() {
    let stack = TestStack::start().await.expect("stack starts");
    let account = stack.create_account("Retention").await.expect("account");
    let call = |body: Value| {
        let stack = &stack;
        let key = account.dashboard_key.clone();
        async move {
            stack
                .call(Method::POST, "/api/v1/retention", &key, Some(body))
                .await
        }
    };
    let (status, problem) = call(
        json!({"from": "2025-03-10", "to": "2025-03-01", "days": [400],
        "events": {"start": "session_join", "return": "x"}}),
    )
    .await;
    assert_eq!(status, 422, "{problem}");
    assert_eq!(problem["code"], "validation_failed", "{problem}");
    let fields: Vec<&str> = problem["errors"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["field"].as_str())
        .collect();
    assert_eq!(fields, ["from", "days[0]", "events.start"]);
    let (status, problem) = call(json!({"from": "2020-01-01", "to": "2025-01-01"})).await;
    assert_eq!(
        (status, problem["errors"][0]["field"].clone()),
        (422, json!("to"))
    );
    // Not the expected shape: a 400 problem, never a 5xx.
    let (status, problem) = call(json!({"period": "year"})).await;
    assert_eq!(status, 400, "{problem}");
    let (status, _) = call(json!({"days": [1e20]})).await;
    assert_eq!(status, 400);
    // A plugin key may not read.
    let (status, _) = stack
        .call(
            Method::POST,
            "/api/v1/retention",
            &account.plugin_key,
            Some(json!({})),
        )
        .await;
    assert_eq!(status, 403);
}
