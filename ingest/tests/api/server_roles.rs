//! A heartbeat's `role`: `server` (also when absent or null) or `proxy`; anything else is
//! refused, naming the field.

use crate::helpers::{SERVER, TestIngest};
use serde_json::{Value, json};
use shared::envelope::RecordBatch;
use shared::records::ServerRole;

fn heartbeat(role: Option<Value>) -> Value {
    let mut body = json!({"server_id": SERVER, "tps": 20.0, "player_count": 7, "max_players": 500});
    if let Some(role) = role {
        body["role"] = role;
    }
    body
}

#[tokio::test]
async fn a_heartbeat_says_proxy_or_server_and_the_log_keeps_it() {
    let ingest = TestIngest::start().await;
    let sent = [
        (Some(json!("proxy")), Some(ServerRole::Proxy)),
        (Some(json!("server")), Some(ServerRole::Server)),
        (Some(Value::Null), None),
        (None, None),
    ];
    for (role, _) in &sent {
        let (status, body) = ingest
            .post("/api/plugin/heartbeat", heartbeat(role.clone()))
            .await;
        assert_eq!(status, 202, "{role:?}: {body}");
        assert_eq!(body["accepted"], 1, "{role:?}: {body}");
    }
    let mut logged: Vec<Option<ServerRole>> = Vec::new();
    for (_, message) in ingest.decoded_log().await {
        let RecordBatch::Heartbeat(records) = message.batch else {
            panic!("not a heartbeat: {:?}", message.batch);
        };
        logged.extend(records.into_iter().map(|r| r.record.role));
    }
    let expected: Vec<Option<ServerRole>> = sent.iter().map(|(_, stored)| *stored).collect();
    assert_eq!(logged, expected);
}

#[tokio::test]
async fn any_other_role_is_422_naming_the_field_and_nothing_is_logged() {
    let ingest = TestIngest::start().await;
    for role in ["bungee", "Proxy", "", "game_server"] {
        let (status, problem) = ingest
            .post("/api/plugin/heartbeat", heartbeat(Some(json!(role))))
            .await;
        assert_eq!(status, 422, "{role:?}: {problem}");
        assert_eq!(problem["code"], "validation_failed", "{problem}");
        assert!(
            problem["type"].as_str().is_some() && problem["title"].as_str().is_some(),
            "problem details: {problem}"
        );
        let error = &problem["rejected"][0]["errors"][0];
        assert_eq!(error["field"], "role", "{problem}");
        assert_eq!(error["code"], "invalid_value", "{problem}");
        let message = error["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("server") && message.contains("proxy"),
            "says what is allowed: {message}"
        );
        assert!(
            problem["detail"]
                .as_str()
                .unwrap_or_default()
                .starts_with("role: "),
            "{problem}"
        );
    }
    // Not a string at all: a malformed field, named like every wrong type.
    let (status, problem) = ingest
        .post("/api/plugin/heartbeat", heartbeat(Some(json!(1))))
        .await;
    assert_eq!(status, 400, "{problem}");
    assert_eq!(problem["errors"][0]["field"], "role", "{problem}");
    // In a batch, only the bad record is refused.
    let (status, body) = ingest
        .post(
            "/api/plugin/heartbeat",
            json!([
                heartbeat(Some(json!("proxy"))),
                heartbeat(Some(json!("lobby")))
            ]),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    assert_eq!(body["accepted"], 1, "{body}");
    assert_eq!(body["rejected"][0]["index"], 1, "{body}");
    assert_eq!(body["rejected"][0]["errors"][0]["field"], "role", "{body}");
    let logged = ingest.decoded_log().await;
    assert_eq!(logged.len(), 1, "only the batch's good record: {logged:?}");
}
