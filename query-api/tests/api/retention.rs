//! `POST /api/v1/retention` at the boundary: its OpenAPI entry says every rule JSON Schema can
//! (the fuzzer's positive cases must all be accepted), and an account without players gets
//! every cohort of the default range, empty. The counts themselves are checked through the
//! whole pipeline (`tests/pipeline/retention.rs`), against hand-computed expectations.

use crate::helpers::TestApp;
use chrono::{Duration, Utc};
use serde_json::{Value, json};

#[tokio::test]
async fn the_document_describes_the_endpoint_exactly() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let doc: Value = app
        .get_with("/api/openapi.json", None)
        .await?
        .json()
        .await?;
    let operation = &doc["paths"]["/api/v1/retention"]["post"];
    assert_eq!(operation["security"], json!([{"dashboard_key": []}]));
    for status in ["200", "401", "403", "422"] {
        assert!(operation["responses"].get(status).is_some(), "no {status}");
    }
    let request = &doc["components"]["schemas"]["RetentionRequest"];
    assert_eq!(request["additionalProperties"], json!(false));
    assert_eq!(
        request["properties"]["days"]["items"],
        json!({"type": "integer", "minimum": 0, "maximum": 365})
    );
    assert_eq!(request["properties"]["days"]["maxItems"], 12);
    assert_eq!(request["properties"]["from"]["format"], "date");
    let events = &doc["components"]["schemas"]["RetentionEvents"];
    assert_eq!(
        events["properties"]["start"]["pattern"],
        shared::openapi::CUSTOM_EVENT_NAME
    );
    assert_eq!(
        events["properties"]["return"]["pattern"],
        shared::openapi::ANY_EVENT_NAME
    );
    Ok(())
}

#[tokio::test]
async fn an_account_without_players_gets_every_cohort_of_the_range_empty() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let (_, key) = app.account_with_dashboard_key().await?;
    let key = key["key"].as_str().unwrap_or_default().to_owned();
    let post = |body: Value| {
        app.client
            .post(app.url("/api/v1/retention"))
            .bearer_auth(&key)
            .json(&body)
            .send()
    };
    let answer: Value = post(json!({})).await?.json().await?;
    let today = Utc::now().date_naive();
    assert_eq!(answer["to"], json!(today.to_string()));
    assert_eq!(
        answer["from"],
        json!((today - Duration::days(29)).to_string())
    );
    assert_eq!(answer["days"], json!([1, 7, 30]));
    let cohorts = answer["cohorts"].as_array().cloned().unwrap_or_default();
    assert_eq!(cohorts.len(), 30);
    // Today's day 1 is still ahead: not complete, and nobody in it.
    assert_eq!(
        cohorts[29]["returned"][0],
        json!({"day": 1, "players": 0, "fraction": 0.0, "complete": false})
    );
    assert_eq!(cohorts[29]["size"], 0);
    // Without a key: 401 problem details.
    let response = app
        .client
        .post(app.url("/api/v1/retention"))
        .json(&json!({}))
        .send()
        .await?;
    assert_eq!(response.status(), 401);
    Ok(())
}
