//! Integer fields take whole-number floats (`5.0`), as JSON Schema's `integer` does; a
//! fraction is still a 400 problem naming what is wrong.

use crate::helpers::{TestApp, problem, text};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

#[tokio::test]
async fn admin_bodies_take_whole_number_floats() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let account = app.create_account("Net").await?;
    let key = app.create_key(&account, "plugin").await?;
    let cases = [
        (
            Method::POST,
            "/api/admin/reviews".to_owned(),
            json!({"author": "Ann", "rating": 5.0, "body": "Great"}),
            StatusCode::CREATED,
        ),
        (
            Method::PUT,
            format!("/api/admin/accounts/{account}/settings"),
            json!({"staff_groups": ["mod"], "sync_interval_seconds": 15.0}),
            StatusCode::OK,
        ),
        (
            Method::PUT,
            format!("/api/admin/accounts/{account}/privacy"),
            json!({"retention": {"chat": 90.0}, "personal_properties": []}),
            StatusCode::OK,
        ),
        (
            Method::POST,
            format!("/api/admin/accounts/{account}/invites"),
            json!({"login": "mod@example.com", "role": "moderator", "expires_in_seconds": 3600.0}),
            StatusCode::CREATED,
        ),
        (
            Method::POST,
            format!("/api/admin/keys/{}/rotate", text(&key["id"])),
            json!({"grace_seconds": 6e1}),
            StatusCode::CREATED,
        ),
    ];
    for (method, path, body, status) in cases {
        let response = app.admin(method.clone(), &path).json(&body).send().await?;
        let got = response.status();
        let answer: Value = response.json().await.unwrap_or(Value::Null);
        assert_eq!(got, status, "{method} {path}: {answer}");
    }

    let created: Value = app
        .admin(Method::POST, "/api/admin/reviews")
        .json(&json!({"author": "Bo", "rating": 4.0, "body": "Good"}))
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(
        created["rating"],
        json!(4),
        "stored as the integer: {created}"
    );
    let path = format!("/api/admin/reviews/{}", text(&created["id"]));
    let response = app
        .admin(Method::PATCH, &path)
        .json(&json!({"rating": 3.0}))
        .send()
        .await?;
    assert_eq!(response.status(), StatusCode::OK);

    // A fraction, and a number past the field's type, are still refused, as problem details.
    for (path, body) in [
        (
            "/api/admin/reviews".to_owned(),
            json!({"author": "Cy", "rating": 4.5, "body": "Fine"}),
        ),
        (
            "/api/admin/reviews".to_owned(),
            json!({"author": "Cy", "rating": 1e19, "body": "Fine"}),
        ),
    ] {
        let response = app.admin(Method::POST, &path).json(&body).send().await?;
        let body = problem(response, StatusCode::BAD_REQUEST, "malformed_json").await?;
        assert!(
            text(&body["detail"]).contains("rating"),
            "the detail names the field: {body}"
        );
    }
    Ok(())
}

#[tokio::test]
async fn query_bodies_take_whole_number_floats() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let (_, key) = app.account_with_dashboard_key().await?;
    let key = text(&key["key"]);
    for (path, body) in [
        (
            "/api/v1/funnels",
            json!({"steps": ["quest_started", "quest_completed"], "window_seconds": 3600.0,
                   "breakdown": {"property": "tier", "limit": 5.0},
                   "dropped_off": {"step": 1.0, "limit": 10.0}}),
        ),
        ("/api/v1/retention", json!({"days": [0.0, 1, 7.0]})),
    ] {
        let response = app
            .client
            .post(app.url(path))
            .bearer_auth(&key)
            .json(&body)
            .send()
            .await?;
        let status = response.status();
        let answer: Value = response.json().await.unwrap_or(Value::Null);
        assert_eq!(status, StatusCode::OK, "{path}: {answer}");
    }
    let response = app
        .client
        .post(app.url("/api/v1/retention"))
        .bearer_auth(&key)
        .json(&json!({"days": [1.5]}))
        .send()
        .await?;
    problem(response, StatusCode::BAD_REQUEST, "malformed_json").await?;
    Ok(())
}
