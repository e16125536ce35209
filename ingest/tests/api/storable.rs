//! Ingest refuses, per record, what PostgreSQL could not store (a NUL in text or in
//! `properties`, integers past their column, times outside the stored window), so nothing it
//! accepts can stop the projector.

use crate::helpers::{PLAYER, SERVER, TestIngest};
use serde_json::{Value, json};

fn chat(message: &str) -> Value {
    json!({"server_id": SERVER, "player_uuid": PLAYER, "entry_type": "chat", "message": message})
}

/// `(field, code)` of each field error.
type FieldCodes = Vec<(String, String)>;

/// `(index, code, field errors)` of each rejected record.
fn rejections(body: &Value) -> Vec<(u64, String, FieldCodes)> {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    body["rejected"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|r| {
            let fields = r["errors"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default()
                .iter()
                .map(|e| (text(&e["field"]), text(&e["code"])))
                .collect();
            (
                r["index"].as_u64().unwrap_or(u64::MAX),
                text(&r["code"]),
                fields,
            )
        })
        .collect()
}

fn nul_in(field: &str) -> FieldCodes {
    vec![(field.to_owned(), "invalid_characters".to_owned())]
}

#[tokio::test]
async fn a_nul_chat_message_is_rejected_alone_and_the_rest_of_its_batch_is_logged() {
    let ingest = TestIngest::start().await;
    // Entirely well formed (the one-pass decoder), then with a shape error too (record by
    // record): the NUL is caught the same way on both paths.
    let well_formed = json!([chat("first"), chat("a\u{0}b"), chat("third")]);
    let mixed = json!([chat("first"), chat("a\u{0}b"), chat("third"), {"message": 5}]);
    for (body, accepted) in [(well_formed, 2), (mixed, 2)] {
        let (status, response) = ingest.post("/api/plugin/chat", body).await;
        assert_eq!(status, 202, "{response}");
        assert_eq!(response["accepted"], accepted, "{response}");
        assert_eq!(
            rejections(&response)[0],
            (1, "validation_failed".to_owned(), nul_in("message"))
        );
    }
    let log = ingest.decoded_log().await;
    assert_eq!(log.len(), 2);
    for (_, message) in &log {
        let shared::envelope::RecordBatch::Chat(records) = &message.batch else {
            panic!("a chat batch");
        };
        let texts: Vec<&str> = records.iter().map(|r| r.record.message.as_str()).collect();
        assert_eq!(texts, ["first", "third"]);
    }
}

#[tokio::test]
async fn a_custom_event_with_nul_or_a_lone_surrogate_in_properties_is_422() {
    let ingest = TestIngest::start().await;
    for (properties, field) in [
        (r#"{"a":{"b":"x\u0000"}}"#, "properties.a.b"),
        (
            r#"{"list":[1,{"k\u0000":true}]}"#,
            r"properties.list[1].k\u0000",
        ),
        (r#"{"a":"\ud800"}"#, "properties.a"),
    ] {
        let body = format!(
            r#"{{"player_uuid":"{PLAYER}","name":"crate_opened","properties":{properties}}}"#
        );
        let response = ingest
            .post_raw(
                "/api/v1/plugin/events",
                &ingest.plugin_key,
                "application/json",
                body.into_bytes(),
            )
            .await;
        assert_eq!(response.status(), 422, "{properties}");
        assert_eq!(
            response.headers()["content-type"],
            "application/problem+json"
        );
        let problem: Value = response.json().await.expect("problem details");
        assert_eq!(problem["code"], "validation_failed", "{problem}");
        assert_eq!(rejections(&problem)[0].2, nul_in(field), "{problem}");
    }
    assert!(ingest.log_messages().await.is_empty(), "nothing was logged");
}

#[tokio::test]
async fn out_of_column_numbers_and_times_are_422_on_every_kind_they_touch() {
    let ingest = TestIngest::start().await;
    let heartbeat = |count: i64| json!({"server_id": SERVER, "tps": 20.0, "player_count": count, "max_players": 10});
    let cases = [
        (
            "/api/plugin/heartbeat",
            heartbeat(1 << 40),
            "player_count",
            "out_of_range",
        ),
        (
            "/api/plugin/chat",
            json!({"server_id": SERVER, "player_uuid": PLAYER, "entry_type": "chat",
                   "message": "hi", "sent_at": "1999-12-31T23:59:59Z"}),
            "sent_at",
            "out_of_range",
        ),
        (
            "/api/plugin/punishments",
            json!({"server_id": SERVER, "player_uuid": PLAYER, "type": "ban",
                   "expires_at": "9999-12-31T23:59:59-01:00"}),
            "expires_at",
            "out_of_range",
        ),
        (
            "/api/plugin/sessions",
            json!({"server_id": SERVER, "player_uuid": PLAYER, "player_name": "a\u{0}",
                   "event": "join"}),
            "player_name",
            "invalid_characters",
        ),
        (
            "/api/plugin/rank-changes",
            json!({"player_uuid": PLAYER, "action": "add", "group": "\u{0}"}),
            "group",
            "invalid_characters",
        ),
    ];
    for (path, body, field, code) in cases {
        let (status, problem) = ingest.post(path, body).await;
        assert_eq!(status, 422, "{path}: {problem}");
        assert_eq!(
            rejections(&problem)[0].2,
            [(field.to_owned(), code.to_owned())],
            "{path}"
        );
    }
    let (status, _) = ingest
        .post("/api/plugin/heartbeat", heartbeat(i64::from(i32::MAX)))
        .await;
    assert_eq!(status, 202, "the largest integer is accepted");
}
