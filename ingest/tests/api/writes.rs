use crate::helpers::{PLAYER, SERVER, TestIngest};
use flate2::Compression;
use flate2::write::GzEncoder;
use serde_json::{Value, json};
use shared::envelope::RecordBatch;
use shared::subjects::partition_of;
use std::io::Write;
use uuid::Uuid;

/// Where the test account's messages go: `<prefix>.part.<partition>.<account>`, spelled out
/// (not through `Subjects`) so a change of the scheme shows here.
fn account_subjects(ingest: &TestIngest) -> String {
    format!(
        "{}.part.{}.{}",
        ingest.log.subject_prefix,
        partition_of(ingest.account_id, ingest.log.partitions),
        ingest.account_id
    )
}

fn one_of_each() -> Vec<(&'static str, &'static str, Value)> {
    vec![
        (
            "/api/plugin/heartbeat",
            "heartbeat",
            json!({"server_id": SERVER, "tps": 19.8, "player_count": 12, "max_players": 100, "name": "Lobby"}),
        ),
        (
            "/api/plugin/chat",
            "chat",
            json!({"server_id": SERVER, "player_uuid": PLAYER, "entry_type": "chat", "message": "hello"}),
        ),
        (
            "/api/plugin/punishments",
            "punishment",
            json!({"server_id": SERVER, "player_uuid": PLAYER, "type": "ban", "reason": "x-ray", "source_plugin": "litebans", "external_id": "42"}),
        ),
        (
            "/api/plugin/punishments",
            "punishment",
            json!({"server_id": SERVER, "player_uuid": PLAYER, "type": "ban", "action": "revoke", "source_plugin": "litebans", "external_id": "42"}),
        ),
        (
            "/api/plugin/anticheat-flags",
            "anticheat_flag",
            json!({"server_id": SERVER, "player_uuid": PLAYER, "check_name": "Reach", "violation_level": 3.5}),
        ),
        (
            "/api/plugin/sessions",
            "session",
            json!({"server_id": SERVER, "player_uuid": PLAYER, "player_name": "Notch", "event": "join"}),
        ),
        (
            "/api/plugin/rank-changes",
            "rank_change",
            json!({"player_uuid": PLAYER, "action": "set", "group": "mod"}),
        ),
        (
            "/api/plugin/account-links",
            "account_link",
            json!({"player_uuid": PLAYER, "platform": "discord", "external_id": "1234", "action": "link"}),
        ),
    ]
}

#[tokio::test]
async fn every_plugin_write_lands_in_the_log_under_its_subject() {
    let ingest = TestIngest::start().await;
    for (path, _, body) in one_of_each() {
        let (status, response) = ingest.post(path, body).await;
        assert_eq!(status, 202, "{path}: {response}");
        assert_eq!(
            response,
            json!({"accepted": 1, "duplicates": 0, "rejected": []}),
            "{path}"
        );
    }
    let log = ingest.decoded_log().await;
    assert_eq!(log.len(), one_of_each().len());
    for ((subject, message), (_, kind, _)) in log.iter().zip(one_of_each()) {
        assert_eq!(*subject, format!("{}.{kind}", account_subjects(&ingest)));
        assert_eq!(message.account_id, ingest.account_id);
        assert_eq!(message.kind().as_str(), kind);
        assert_eq!(message.batch.len(), 1);
    }
}

#[tokio::test]
async fn a_batch_is_one_log_message_and_bad_records_are_listed() {
    let ingest = TestIngest::start().await;
    let mut batch: Vec<Value> = (0..100)
        .map(|i| json!({"server_id": SERVER, "player_uuid": PLAYER, "entry_type": "command", "message": format!("/home {i}")}))
        .collect();
    batch[7]["player_uuid"] = json!("not-a-uuid");
    batch[9]["message"] = json!("");
    batch[11]["entry_type"] = json!(5);
    let (status, body) = ingest.post("/api/plugin/chat", Value::Array(batch)).await;
    assert_eq!(status, 202, "{body}");
    assert_eq!(body["accepted"], 97);
    let rejected = body["rejected"].as_array().expect("list");
    assert_eq!(
        rejected
            .iter()
            .map(|r| r["index"].as_u64().expect("index"))
            .collect::<Vec<_>>(),
        [7, 9, 11]
    );
    assert_eq!(rejected[0]["code"], "validation_failed");
    assert_eq!(
        rejected[0]["errors"][0],
        json!({"field": "player_uuid", "code": "invalid_uuid", "message": "not a UUID"})
    );
    assert_eq!(rejected[2]["code"], "malformed_json");
    let log = ingest.decoded_log().await;
    assert_eq!(log.len(), 1, "one batch, one log message");
    assert_eq!(log[0].1.batch.len(), 97);
}

#[tokio::test]
async fn a_batch_with_every_record_rejected_is_422_and_stores_nothing() {
    let ingest = TestIngest::start().await;
    let (status, body) = ingest
        .post(
            "/api/plugin/sessions",
            json!([{"server_id": SERVER}, {"player_uuid": PLAYER}]),
        )
        .await;
    assert_eq!(status, 422);
    assert_eq!(body["rejected"].as_array().expect("list").len(), 2);
    assert_eq!(body["rejected"][0]["errors"][0]["code"], "required");
    let (status, _) = ingest.post("/api/plugin/sessions", json!([])).await;
    assert_eq!(status, 422);
    let too_many: Vec<Value> = (0..1001).map(|_| json!({})).collect();
    let (status, body) = ingest
        .post("/api/plugin/sessions", Value::Array(too_many))
        .await;
    assert_eq!(status, 413);
    assert_eq!(body["code"], "payload_too_large");
    assert!(ingest.log_messages().await.is_empty());
}

#[tokio::test]
async fn client_ids_make_retries_duplicates() {
    let ingest = TestIngest::start().await;
    let ids: Vec<Uuid> = (0..3).map(|_| Uuid::now_v7()).collect();
    let batch: Vec<Value> = ids
        .iter()
        .map(|id| json!({"id": id, "server_id": SERVER, "player_uuid": PLAYER, "entry_type": "chat", "message": "hi"}))
        .collect();
    let (status, body) = ingest
        .post("/api/plugin/chat", Value::Array(batch.clone()))
        .await;
    assert_eq!(
        (
            status,
            body["accepted"].as_u64(),
            body["duplicates"].as_u64()
        ),
        (202, Some(3), Some(0))
    );
    let (status, body) = ingest
        .post("/api/plugin/chat", Value::Array(batch.clone()))
        .await;
    assert_eq!(
        (
            status,
            body["accepted"].as_u64(),
            body["duplicates"].as_u64()
        ),
        (202, Some(0), Some(3))
    );
    // A repeated id inside one request is a duplicate too.
    let twice = json!([batch[0].clone(), batch[0].clone()]);
    let (_, body) = ingest.post("/api/plugin/chat", twice).await;
    assert_eq!(body["duplicates"], 1);
    let log = ingest.decoded_log().await;
    assert_eq!(
        log.len(),
        2,
        "the exact retry was dropped by the log's duplicate window"
    );
    match &log[0].1.batch {
        RecordBatch::Chat(records) => {
            assert_eq!(records.iter().map(|r| r.id).collect::<Vec<_>>(), ids)
        }
        other => panic!("unexpected batch {other:?}"),
    }
}

#[tokio::test]
async fn gzip_bodies_are_accepted_and_bad_gzip_is_400() {
    let ingest = TestIngest::start().await;
    let body =
        json!({"server_id": SERVER, "tps": 20, "player_count": 0, "max_players": 20}).to_string();
    let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
    encoder.write_all(body.as_bytes()).expect("gzip");
    let gz = encoder.finish().expect("gzip");
    let response = ingest
        .http
        .post(format!("{}/api/plugin/heartbeat", ingest.base))
        .bearer_auth(&ingest.plugin_key)
        .header("content-type", "application/json")
        .header("content-encoding", "gzip")
        .body(gz)
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), 202);
    let response = ingest
        .http
        .post(format!("{}/api/plugin/heartbeat", ingest.base))
        .bearer_auth(&ingest.plugin_key)
        .header("content-type", "application/json")
        .header("content-encoding", "gzip")
        .body(body)
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), 400);
}

#[tokio::test]
async fn a_players_ip_never_reaches_the_log() {
    let ingest = TestIngest::start().await;
    let body = json!({"server_id": SERVER, "player_uuid": PLAYER, "player_name": "Notch", "event": "join", "ip": "203.0.113.77"});
    assert_eq!(ingest.post("/api/plugin/sessions", body).await.0, 202);
    let (_, bytes) = ingest.log_messages().await.pop().expect("one message");
    let text = String::from_utf8(bytes).expect("utf8");
    assert!(!text.contains("203.0.113.77"), "{text}");
    assert!(text.contains("ip_hash"), "{text}");
}

#[tokio::test]
async fn a_custom_event_is_answered_with_its_id_and_times_and_kept_verbatim() {
    let ingest = TestIngest::start().await;
    let properties = r#"{"price": 19.990, "big": 123456789012345678901234567890, "tags": ["a", null], "deep": {"x": {"y": true}}}"#;
    let body = format!(
        r#"{{"player_uuid": "{PLAYER}", "name": "crate_opened", "properties": {properties}}}"#
    );
    let response = ingest
        .post_raw(
            "/api/v1/plugin/events",
            &ingest.plugin_key,
            "application/json",
            body.into_bytes(),
        )
        .await;
    assert_eq!(response.status(), 202);
    let accepted: Value = response.json().await.expect("json");
    assert_eq!(accepted["name"], "crate_opened");
    assert_eq!(
        accepted["occurred_at"], accepted["received_at"],
        "occurred_at defaults to receipt"
    );
    assert!(
        accepted["received_at"]
            .as_str()
            .expect("time")
            .ends_with('Z')
    );
    let id: Uuid = accepted["id"].as_str().expect("id").parse().expect("uuid");

    let log = ingest.decoded_log().await;
    let (subject, message) = &log[0];
    assert_eq!(
        *subject,
        format!("{}.custom.crate_opened", account_subjects(&ingest))
    );
    match &message.batch {
        RecordBatch::Custom(events) => {
            assert_eq!(events[0].id, id);
            assert_eq!(
                events[0].record.properties.as_ref().expect("kept").get(),
                properties
            );
        }
        other => panic!("unexpected batch {other:?}"),
    }
}

#[tokio::test]
async fn a_custom_event_batch_is_split_by_name_into_subjects() {
    let ingest = TestIngest::start().await;
    let batch = json!([
        {"player_uuid": PLAYER, "name": "level_up", "occurred_at": "2026-01-01T10:00:00+01:00"},
        {"player_uuid": PLAYER, "name": "crate_opened"},
        {"player_uuid": PLAYER, "name": "level_up"},
        {"player_uuid": PLAYER, "name": "rank_bought"},
        {"player_uuid": PLAYER, "name": "sessionx_ok"},
    ]);
    let (status, body) = ingest.post("/api/v1/plugin/events", batch).await;
    assert_eq!(status, 202);
    assert_eq!(body["accepted"], 4);
    assert_eq!(body["rejected"][0]["index"], 3);
    assert_eq!(body["rejected"][0]["code"], "reserved_prefix");
    let mut subjects: Vec<String> = ingest
        .decoded_log()
        .await
        .into_iter()
        .map(|(s, _)| s)
        .collect();
    subjects.sort();
    let prefix = format!("{}.custom", account_subjects(&ingest));
    assert_eq!(
        subjects,
        [
            format!("{prefix}.crate_opened"),
            format!("{prefix}.level_up"),
            format!("{prefix}.sessionx_ok")
        ]
    );
}

#[tokio::test]
async fn timestamps_far_in_the_future_and_bad_values_are_422() {
    let ingest = TestIngest::start().await;
    let future = (chrono::Utc::now() + chrono::Duration::minutes(30)).to_rfc3339();
    let (status, body) = ingest
        .post("/api/plugin/heartbeat", json!({"server_id": SERVER, "tps": 2000, "player_count": -1, "max_players": 5, "timestamp": future}))
        .await;
    assert_eq!(status, 422);
    let fields: Vec<&str> = body["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .map(|e| e["field"].as_str().expect("field"))
        .collect();
    assert_eq!(fields, ["tps", "player_count", "timestamp"]);
}
