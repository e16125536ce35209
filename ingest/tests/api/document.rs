//! The served OpenAPI document and the decoder agree: what the document admits is accepted,
//! and its bounds are the ones ingest enforces.

use crate::helpers::{PLAYER, SERVER, TestIngest};
use serde_json::{Value, json};

/// Ingest's own document, as a client reads it.
async fn document(ingest: &TestIngest) -> Value {
    let response = ingest
        .http
        .get(format!("{}/api/plugin/openapi.json", ingest.base))
        .send()
        .await
        .expect("request sent");
    assert_eq!(response.status(), 200);
    response.json().await.expect("a JSON document")
}

/// The `maxItems` the document gives the batch form of `path`'s body.
fn batch_bound(doc: &Value, path: &str) -> usize {
    let body = &doc["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"];
    let name = body["$ref"]
        .as_str()
        .and_then(|r| r.rsplit('/').next())
        .unwrap_or_else(|| panic!("{path}: the body is a named schema: {body}"));
    let batch = doc["components"]["schemas"][name]["oneOf"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|branch| branch["type"] == "array")
        .unwrap_or_else(|| panic!("{path}: {name} has a batch branch"));
    let bound = batch["maxItems"]
        .as_u64()
        .unwrap_or_else(|| panic!("{path}: the batch has no maxItems: {batch}"));
    usize::try_from(bound).expect("a small bound")
}

#[tokio::test]
async fn a_batch_one_past_the_documented_bound_is_413_and_one_at_it_is_accepted() {
    let ingest = TestIngest::start().await;
    let doc = document(&ingest).await;
    let heartbeat = json!({"server_id": SERVER, "tps": 20, "player_count": 1.0, "max_players": 10});
    let event = json!({"player_uuid": PLAYER, "name": "crate_opened"});
    for (path, record) in [
        ("/api/plugin/heartbeat", heartbeat),
        ("/api/v1/plugin/events", event),
    ] {
        let bound = batch_bound(&doc, path);
        let (status, body) = ingest
            .post(path, Value::Array(vec![record.clone(); bound + 1]))
            .await;
        assert_eq!(
            (status, &body["code"]),
            (413, &json!("payload_too_large")),
            "{path}: {body}"
        );
        let limit = format!("at most {bound} records");
        assert!(
            body["detail"].as_str().is_some_and(|d| d.contains(&limit)),
            "{path}: the problem names the documented bound: {body}"
        );
        let (status, body) = ingest.post(path, Value::Array(vec![record; bound])).await;
        assert_eq!(status, 202, "{path}: {body}");
        assert_eq!(
            body["accepted"].as_u64(),
            Some(bound as u64),
            "{path}: {body}"
        );
    }
}

#[tokio::test]
async fn whole_number_floats_are_integers_and_fractions_are_refused() {
    let ingest = TestIngest::start().await;
    // As JSON Schema's `integer` admits them, and as several encoders write them.
    let whole =
        json!({"server_id": SERVER, "tps": 20.0, "player_count": 12.0, "max_players": 592280.0});
    let (status, body) = ingest.post("/api/plugin/heartbeat", whole.clone()).await;
    assert_eq!(status, 202, "{body}");
    // In a batch, the one-pass decoder takes them too (nothing is rejected).
    let (status, body) = ingest
        .post("/api/plugin/heartbeat", json!([whole.clone(), whole]))
        .await;
    assert_eq!((status, &body["rejected"]), (202, &json!([])), "{body}");
    let log = ingest.decoded_log().await;
    let logged = serde_json::to_value(&log[0].1).expect("serializes");
    assert!(
        logged.to_string().contains("\"max_players\":592280,"),
        "logged as a plain integer: {logged}"
    );

    for (value, status, code) in [
        (json!(5.5), 400, "wrong_type"),
        (json!(1e19), 422, "invalid_value"),
        (json!(-1.0), 422, "out_of_range"),
        (json!(2_147_483_648.0), 422, "out_of_range"),
    ] {
        let record =
            json!({"server_id": SERVER, "tps": 20, "player_count": 1, "max_players": value});
        let (got, body) = ingest.post("/api/plugin/heartbeat", record).await;
        assert_eq!(got, status, "{value}: {body}");
        assert_eq!(
            (&body["errors"][0]["field"], &body["errors"][0]["code"]),
            (&json!("max_players"), &json!(code)),
            "{value}: {body}"
        );
    }
}

#[tokio::test]
async fn every_rfc3339_spelling_is_a_time_and_a_leap_second_is_the_next_minute() {
    let ingest = TestIngest::start().await;
    let now = chrono::Utc::now() - chrono::Duration::days(1);
    let day = now.format("%Y-%m-%d").to_string();
    for (sent, occurred) in [
        (
            format!("{day}t12:00:00z"),
            format!("{day}T12:00:00.000000Z"),
        ),
        (
            format!("{day}T17:30:00.123456789123+05:30"),
            format!("{day}T12:00:00.123456Z"),
        ),
        (
            format!("{day}T23:59:60Z"),
            format!(
                "{}T00:00:00.000000Z",
                (now + chrono::Duration::days(1)).format("%Y-%m-%d")
            ),
        ),
    ] {
        let event = json!({"player_uuid": PLAYER, "name": "crate_opened", "occurred_at": sent});
        let (status, body) = ingest.post("/api/v1/plugin/events", event).await;
        assert_eq!(status, 202, "{sent}: {body}");
        assert_eq!(body["occurred_at"], json!(occurred), "{sent}: {body}");
    }
}
