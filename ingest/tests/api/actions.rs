//! The action feed (`GET /api/plugin/actions`) and its acknowledgements
//! (`POST /api/plugin/actions/acks`), against a real nats-server: actions are appended to the
//! log as query-api's pages append them.

use crate::helpers::{PLAYER, SERVER, TestIngest};
use async_nats::jetstream;
use serde_json::{Value, json};
use shared::envelope::RecordBatch;
use shared::keys::KeyKind;
use shared::subjects::partition_of;
use std::time::{Duration, Instant};
use uuid::Uuid;

/// The kind token of an action's subject, and of its log batch.
const KIND: &str = "action";

/// Appends one action for `account` (a ban of the test player, `reason` given), with the
/// message id query-api uses; returns its id.
pub async fn write_action(ingest: &TestIngest, account: Uuid, reason: &str) -> Uuid {
    write_issue(ingest, account, "ban", reason).await
}

/// Appends an `issue` of a `kind` punishment (`ban`, `kick`, ...) of the test player for
/// `account`, as query-api's pages append it; returns its id.
pub async fn write_issue(ingest: &TestIngest, account: Uuid, kind: &str, reason: &str) -> Uuid {
    let id = Uuid::now_v7();
    let record = json!({
        "id": id,
        "type": "issue",
        "punishment": {"type": kind, "player_uuid": PLAYER, "player_name": "Notch",
                       "reason": reason, "expires_at": null, "scope": "global"},
        "by": {"member_id": Uuid::now_v7(), "name": "Alice"},
        "at": chrono::Utc::now(),
    });
    let message = json!({
        "v": 1, "account_id": account, "received_at": chrono::Utc::now(),
        "batch": {"kind": KIND, "records": [{"id": id, "record": record}]},
    });
    let subject = format!(
        "{}.part.{}.{account}.{KIND}",
        ingest.log.subject_prefix,
        partition_of(account, ingest.log.partitions)
    );
    let client = async_nats::connect(ingest.nats.url())
        .await
        .expect("connect");
    let mut headers = async_nats::HeaderMap::new();
    headers.insert("Nats-Msg-Id", format!("action:{account}:{id}").as_str());
    jetstream::new(client)
        .publish_with_headers(subject, headers, message.to_string().into())
        .await
        .expect("publish")
        .await
        .expect("the stream's ack");
    id
}

async fn get(ingest: &TestIngest, key: &str, query: &str) -> (u16, Value) {
    let response = ingest
        .http
        .get(format!("{}/api/plugin/actions{query}", ingest.base))
        .bearer_auth(key)
        .send()
        .await
        .expect("request sent");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

fn reasons(page: &Value) -> Vec<&str> {
    page["actions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| a["punishment"]["reason"].as_str().unwrap_or(""))
        .collect()
}

#[tokio::test]
async fn the_feed_pages_after_a_cursor_oldest_first_and_opens_personal_fields() {
    let ingest = TestIngest::start().await;
    let key = ingest.plugin_key.clone();
    let (status, empty) = get(&ingest, &key, "?wait=0").await;
    assert_eq!((status, &empty["cursor"]), (200, &json!("0")), "{empty}");
    assert_eq!(empty["actions"], json!([]));

    let first = write_action(&ingest, ingest.account_id, "one").await;
    write_action(&ingest, ingest.account_id, "two").await;
    write_action(&ingest, ingest.account_id, "three").await;
    let (status, page) = get(&ingest, &key, "?wait=0").await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(reasons(&page), ["one", "two", "three"]);
    let actions = page["actions"].as_array().expect("actions");
    assert_eq!(actions[0]["id"], json!(first));
    assert_eq!(actions[0]["punishment"]["player_name"], json!("Notch"));
    assert_eq!(
        page["cursor"], actions[2]["cursor"],
        "the page's cursor is the last action's"
    );

    let after_first = actions[0]["cursor"].as_str().expect("cursor");
    let (_, rest) = get(&ingest, &key, &format!("?after={after_first}&wait=0")).await;
    assert_eq!(reasons(&rest), ["two", "three"]);
    let end = page["cursor"].as_str().expect("cursor");
    let (_, none) = get(&ingest, &key, &format!("?after={end}&wait=0")).await;
    assert_eq!((reasons(&none).len(), &none["cursor"]), (0, &json!(end)));
}

#[tokio::test]
async fn a_waiting_request_wakes_when_an_action_lands_and_wait_zero_does_not_wait() {
    let ingest = TestIngest::start().await;
    let key = ingest.plugin_key.clone();
    let started = Instant::now();
    let (status, page) = get(&ingest, &key, "?wait=0").await;
    assert_eq!((status, reasons(&page).len()), (200, 0));
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "wait=0 answers at once"
    );

    let poll = {
        let (base, http, key) = (ingest.base.clone(), ingest.http.clone(), key.clone());
        tokio::spawn(async move {
            let started = Instant::now();
            let page: Value = http
                .get(format!("{base}/api/plugin/actions?wait=30"))
                .bearer_auth(key)
                .send()
                .await
                .expect("sent")
                .json()
                .await
                .expect("json");
            (page, started.elapsed())
        })
    };
    write_action(&ingest, ingest.account_id, "while waiting").await;
    let (page, took) = poll.await.expect("the poll ends");
    assert_eq!(reasons(&page), ["while waiting"]);
    assert!(
        took < Duration::from_secs(15),
        "woke on the action, not at the wait's end: {took:?}"
    );
}

#[tokio::test]
async fn another_accounts_actions_are_never_seen() {
    let ingest = TestIngest::start().await;
    let other_account = Uuid::now_v7();
    let other_key = ingest.add_key(other_account, KeyKind::Plugin).await;
    ingest.wait_until_accepts(&other_key).await;
    write_action(&ingest, other_account, "theirs").await;
    write_action(&ingest, ingest.account_id, "ours").await;
    let (_, ours) = get(&ingest, &ingest.plugin_key, "?wait=0").await;
    assert_eq!(reasons(&ours), ["ours"]);
    let (_, theirs) = get(&ingest, &other_key, "?wait=0").await;
    assert_eq!(reasons(&theirs), ["theirs"]);
    // Even from a cursor of the other account's feed.
    let cursor = theirs["cursor"].as_str().expect("cursor");
    let (_, after) = get(
        &ingest,
        &ingest.plugin_key,
        &format!("?after=0&wait=0&x={cursor}"),
    )
    .await;
    assert_eq!(reasons(&after), ["ours"]);
}

#[tokio::test]
async fn bad_input_is_a_problem() {
    let ingest = TestIngest::start().await;
    let key = ingest.plugin_key.clone();
    for (query, field) in [
        ("?after=abc", "after"),
        ("?after=-1", "after"),
        ("?wait=31", "wait"),
        ("?wait=soon", "wait"),
    ] {
        let response = ingest
            .http
            .get(format!("{}/api/plugin/actions{query}", ingest.base))
            .bearer_auth(&key)
            .send()
            .await
            .expect("sent");
        assert_eq!(response.status().as_u16(), 422, "{query}");
        assert_eq!(
            response.headers()["content-type"],
            "application/problem+json",
            "{query}"
        );
        let problem: Value = response.json().await.expect("json");
        assert_eq!(
            problem["errors"][0]["field"],
            json!(field),
            "{query}: {problem}"
        );
    }
    let (status, _) = get(&ingest, "wdn_plugin_nope", "?wait=0").await;
    assert_eq!(status, 401);
    let (status, _) = get(&ingest, &ingest.dashboard_key, "?wait=0").await;
    assert_eq!(status, 403);
}

#[tokio::test]
async fn acks_are_logged_one_record_per_result() {
    let ingest = TestIngest::start().await;
    let action = Uuid::now_v7();
    let (status, report) = ingest
        .post(
            "/api/plugin/actions/acks",
            json!({"server_id": SERVER, "results": [
                {"action_id": action, "outcome": "applied"},
                {"action_id": Uuid::now_v7(), "outcome": "skipped", "detail": "scope lobby", "at": chrono::Utc::now()},
            ]}),
        )
        .await;
    assert_eq!((status, &report["accepted"]), (202, &json!(2)), "{report}");
    let acks: Vec<_> = ingest
        .decoded_log()
        .await
        .into_iter()
        .filter_map(|(subject, message)| match message.batch {
            RecordBatch::ActionAck(records) => Some((subject, records)),
            _ => None,
        })
        .collect();
    assert_eq!(acks.len(), 1, "one message");
    assert!(
        acks[0]
            .0
            .ends_with(&format!("{}.action_ack", ingest.account_id))
    );
    assert_eq!(acks[0].1.len(), 2);
    assert_eq!(acks[0].1[0].record.action_id, action);

    for (body, expected) in [
        (json!({"server_id": SERVER}), 400),
        (json!({"server_id": "x", "results": []}), 400),
        (
            json!({"server_id": SERVER, "results": [{"action_id": action, "outcome": "done"}]}),
            422,
        ),
        (json!({"server_id": SERVER, "results": []}), 422),
        (
            json!({"server_id": SERVER, "results": [{"action_id": action, "outcome": "failed", "detail": "x".repeat(513)}]}),
            422,
        ),
    ] {
        let (status, problem) = ingest.post("/api/plugin/actions/acks", body.clone()).await;
        assert_eq!(status, expected, "{body}: {problem}");
        assert!(problem["code"].is_string(), "{problem}");
    }
}
