//! Accounts, settings, and admin authentication.

use crate::helpers::{TestApp, error_fields, problem, text};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

#[tokio::test]
async fn accounts_are_created_and_listed() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let response = app
        .admin(Method::POST, "/api/admin/accounts")
        .json(&json!({"name": "Hypixel-ish"}))
        .send()
        .await?;
    assert_eq!(response.status(), StatusCode::CREATED);
    let created: Value = response.json().await?;
    assert_eq!(created["name"], "Hypixel-ish");
    assert!(text(&created["created_at"]).ends_with('Z'));
    let second = app.create_account("Second").await?;

    let list: Value = app
        .admin(Method::GET, "/api/admin/accounts")
        .send()
        .await?
        .json()
        .await?;
    let ids: Vec<String> = list["items"]
        .as_array()
        .map(|items| items.iter().map(|a| text(&a["id"])).collect())
        .unwrap_or_default();
    assert_eq!(ids, [text(&created["id"]), second]);

    let response = app
        .admin(Method::POST, "/api/admin/accounts")
        .json(&json!({"name": ""}))
        .send()
        .await?;
    let body = problem(
        response,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    )
    .await?;
    assert_eq!(error_fields(&body), ["name"]);
    Ok(())
}

#[tokio::test]
async fn admin_paths_need_the_admin_key() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let account = app.create_account("Net").await?;
    let plugin = text(&app.create_key(&account, "plugin").await?["key"]);
    let dashboard = text(&app.create_key(&account, "dashboard").await?["key"]);

    let response = app.get_with("/api/admin/accounts", None).await?;
    assert_eq!(
        response
            .headers()
            .get("www-authenticate")
            .map(|v| v.as_bytes()),
        Some(&b"Bearer"[..])
    );
    problem(response, StatusCode::UNAUTHORIZED, "missing_credentials").await?;

    let response = app
        .get_with("/api/admin/accounts", Some("wdn_admin_nope"))
        .await?;
    assert!(response.headers().contains_key("www-authenticate"));
    problem(response, StatusCode::UNAUTHORIZED, "invalid_credentials").await?;

    // A key of another kind is known but wrong: 403 (once the directory has it).
    let forbidden = app
        .status_becomes(
            "/api/admin/accounts",
            &plugin,
            StatusCode::FORBIDDEN,
            crate::helpers::WAIT,
        )
        .await?;
    assert!(forbidden, "a plugin key on an admin path must be 403");
    // The dashboard key reaches the directory on its own: waiting for the plugin key's does
    // not wait for it.
    let forbidden = app
        .status_becomes(
            "/api/admin/accounts",
            &dashboard,
            StatusCode::FORBIDDEN,
            crate::helpers::WAIT,
        )
        .await?;
    assert!(forbidden, "a dashboard key on an admin path must be 403");
    let response = app
        .get_with("/api/admin/accounts", Some(&dashboard))
        .await?;
    problem(response, StatusCode::FORBIDDEN, "wrong_key_type").await?;

    // Authentication comes before the body is looked at.
    let response = app
        .client
        .post(app.url("/api/admin/accounts"))
        .header("content-type", "text/plain")
        .body("nope")
        .send()
        .await?;
    problem(response, StatusCode::UNAUTHORIZED, "missing_credentials").await?;
    Ok(())
}

#[tokio::test]
async fn settings_default_validate_and_persist() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let account = app.create_account("Net").await?;
    let path = format!("/api/admin/accounts/{account}/settings");

    let defaults: Value = app.admin(Method::GET, &path).send().await?.json().await?;
    assert_eq!(
        defaults["staff_groups"],
        json!([
            "owner",
            "admin",
            "administrator",
            "moderator",
            "mod",
            "helper",
            "staff"
        ])
    );
    assert_eq!(defaults["sync_interval_seconds"], 15);
    assert_eq!(defaults["updated_at"], Value::Null);

    let response = app
        .admin(Method::PUT, &path)
        .json(&json!({"staff_groups": ["admin", "mod"], "sync_interval_seconds": 30}))
        .send()
        .await?;
    assert_eq!(response.status(), StatusCode::OK);
    let put: Value = response.json().await?;
    assert_eq!(put["staff_groups"], json!(["admin", "mod"]));
    assert_eq!(put["sync_interval_seconds"], 30);
    let read: Value = app.admin(Method::GET, &path).send().await?.json().await?;
    assert_eq!(read, put);

    let response = app
        .admin(Method::PUT, &path)
        .json(&json!({"staff_groups": ["", "x".repeat(65)], "sync_interval_seconds": 0}))
        .send()
        .await?;
    let body = problem(
        response,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    )
    .await?;
    assert_eq!(
        error_fields(&body),
        [
            "staff_groups[0]",
            "staff_groups[1]",
            "sync_interval_seconds"
        ]
    );

    let unknown = format!("/api/admin/accounts/{}/settings", uuid::Uuid::now_v7());
    let response = app
        .admin(Method::PUT, &unknown)
        .json(&json!({"staff_groups": [], "sync_interval_seconds": 15}))
        .send()
        .await?;
    problem(response, StatusCode::NOT_FOUND, "not_found").await?;
    let response = app.admin(Method::GET, &unknown).send().await?;
    problem(response, StatusCode::NOT_FOUND, "not_found").await?;
    let response = app
        .admin(Method::GET, "/api/admin/accounts/not-a-uuid/settings")
        .send()
        .await?;
    problem(response, StatusCode::NOT_FOUND, "not_found").await?;
    Ok(())
}
