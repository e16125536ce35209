//! Issuing, listing, rotating and revoking keys, across instances.

use crate::helpers::{TestApp, problem, status_becomes_at, text};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::time::Duration;
use uuid::Uuid;

const EVENTS: &str = "/api/v1/events";

#[tokio::test]
async fn keys_are_issued_once_and_listed_without_secrets() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let account = app.create_account("Net").await?;
    let plugin = app.create_key(&account, "plugin").await?;
    let dashboard = app.create_key(&account, "dashboard").await?;
    assert!(text(&plugin["key"]).starts_with("wdn_plugin_"));
    assert!(text(&dashboard["key"]).starts_with("wdn_dash_"));
    assert_eq!(plugin["kind"], "plugin");
    assert_eq!(plugin["label"], "test");

    let response = app
        .admin(Method::GET, &format!("/api/admin/accounts/{account}/keys"))
        .send()
        .await?;
    assert_eq!(response.status(), StatusCode::OK);
    let raw = response.text().await?;
    assert!(!raw.contains(&text(&plugin["key"])) && !raw.contains(&text(&dashboard["key"])));
    let list: Value = serde_json::from_str(&raw)?;
    let first = &list["items"][0];
    assert_eq!(first["id"], plugin["id"]);
    for field in [
        "id",
        "kind",
        "label",
        "created_at",
        "revoked_at",
        "last_used_at",
    ] {
        assert!(first.get(field).is_some(), "missing {field}");
    }
    assert!(first.get("key").is_none());
    assert_eq!(list["items"].as_array().map(Vec::len), Some(2));

    // The stored form is the hash, never the secret.
    let stored: Vec<String> = sqlx::query_scalar("SELECT key_hash FROM api_keys")
        .fetch_all(&app.db.pool)
        .await?;
    assert!(stored.iter().all(|h| h.len() == 64 && !h.contains("wdn_")));

    let missing = format!("/api/admin/accounts/{}/keys", Uuid::now_v7());
    let response = app.admin(Method::GET, &missing).send().await?;
    problem(response, StatusCode::NOT_FOUND, "not_found").await?;
    let response = app
        .admin(Method::POST, &missing)
        .json(&json!({"kind": "plugin"}))
        .send()
        .await?;
    problem(response, StatusCode::NOT_FOUND, "not_found").await?;
    let response = app
        .admin(Method::POST, &format!("/api/admin/accounts/{account}/keys"))
        .json(&json!({"kind": "admin"}))
        .send()
        .await?;
    problem(
        response,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    )
    .await?;
    Ok(())
}

#[tokio::test]
async fn a_rotated_key_works_through_its_grace_period_then_stops() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let (account, old) = app.account_with_dashboard_key().await?;
    let old_secret = text(&old["key"]);
    let rotate = format!("/api/admin/keys/{}/rotate", text(&old["id"]));

    let response = app
        .admin(Method::POST, &rotate)
        .json(&json!({"grace_seconds": 2}))
        .send()
        .await?;
    assert_eq!(response.status(), StatusCode::CREATED);
    let new: Value = response.json().await?;
    assert_ne!(new["id"], old["id"]);
    assert_eq!(new["kind"], "dashboard");
    assert_eq!(new["account_id"], account.as_str());
    let new_secret = text(&new["key"]);

    let fresh = app
        .status_becomes(EVENTS, &new_secret, StatusCode::OK, crate::helpers::WAIT)
        .await?;
    assert!(fresh, "the new key must work");
    assert_eq!(
        app.get_with(EVENTS, Some(&old_secret)).await?.status(),
        StatusCode::OK
    );
    let expired = app
        .status_becomes(
            EVENTS,
            &old_secret,
            StatusCode::UNAUTHORIZED,
            Duration::from_secs(10),
        )
        .await?;
    assert!(expired, "the old key must stop after its grace period");
    assert_eq!(
        app.get_with(EVENTS, Some(&new_secret)).await?.status(),
        StatusCode::OK
    );

    let list: Value = app
        .admin(Method::GET, &format!("/api/admin/accounts/{account}/keys"))
        .send()
        .await?
        .json()
        .await?;
    assert!(list["items"][0]["revoked_at"].is_string());
    assert!(list["items"][1]["revoked_at"].is_null());

    let response = app.admin(Method::POST, &rotate).send().await?;
    problem(response, StatusCode::CONFLICT, "already_revoked").await?;
    let response = app
        .admin(
            Method::POST,
            &format!("/api/admin/keys/{}/rotate", text(&new["id"])),
        )
        .json(&json!({"grace_seconds": 604_801}))
        .send()
        .await?;
    problem(
        response,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    )
    .await?;
    let response = app
        .admin(
            Method::POST,
            &format!("/api/admin/keys/{}/rotate", Uuid::now_v7()),
        )
        .send()
        .await?;
    problem(response, StatusCode::NOT_FOUND, "not_found").await?;
    Ok(())
}

#[tokio::test]
async fn rotation_without_grace_stops_the_old_key_at_once() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let (_, old) = app.account_with_dashboard_key().await?;
    let response = app
        .admin(
            Method::POST,
            &format!("/api/admin/keys/{}/rotate", text(&old["id"])),
        )
        .send()
        .await?;
    assert_eq!(response.status(), StatusCode::CREATED);
    let stopped = app
        .status_becomes(
            EVENTS,
            &text(&old["key"]),
            StatusCode::UNAUTHORIZED,
            Duration::from_secs(2),
        )
        .await?;
    assert!(stopped);
    Ok(())
}

#[tokio::test]
async fn a_revoked_key_is_refused_everywhere_within_two_seconds() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let second = app.second_instance().await?;
    let (_, key) = app.account_with_dashboard_key().await?;
    let secret = text(&key["key"]);
    let seen = status_becomes_at(
        &app.client,
        second.addr,
        EVENTS,
        &secret,
        StatusCode::OK,
        crate::helpers::WAIT,
    )
    .await;
    assert!(seen, "the second instance must see the new key");

    let path = format!("/api/admin/keys/{}", text(&key["id"]));
    let response = app.admin(Method::DELETE, &path).send().await?;
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    let here = app
        .status_becomes(
            EVENTS,
            &secret,
            StatusCode::UNAUTHORIZED,
            Duration::from_secs(2),
        )
        .await?;
    let there = status_becomes_at(
        &app.client,
        second.addr,
        EVENTS,
        &secret,
        StatusCode::UNAUTHORIZED,
        Duration::from_secs(2),
    )
    .await;
    assert!(
        here && there,
        "revoked key still accepted (here: {here}, there: {there})"
    );

    let response = app.admin(Method::DELETE, &path).send().await?;
    problem(response, StatusCode::CONFLICT, "already_revoked").await?;
    let response = app
        .admin(
            Method::DELETE,
            &format!("/api/admin/keys/{}", Uuid::now_v7()),
        )
        .send()
        .await?;
    problem(response, StatusCode::NOT_FOUND, "not_found").await?;
    Ok(())
}

#[tokio::test]
async fn start_up_puts_keys_missing_from_the_bucket() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let account = app.create_account("Net").await?;
    // A key recorded in PostgreSQL only, e.g. by a restore: the next start must publish it.
    let secret = shared::keys::generate_secret(shared::keys::KeyKind::Dashboard);
    sqlx::query("INSERT INTO api_keys (id, account_id, kind, key_hash) VALUES ($1, $2::uuid, 'dashboard', $3)")
        .bind(Uuid::now_v7())
        .bind(&account)
        .bind(shared::keys::hash_secret(&secret))
        .execute(&app.db.pool)
        .await?;
    assert_eq!(
        app.get_with(EVENTS, Some(&secret)).await?.status(),
        StatusCode::UNAUTHORIZED
    );
    let _second = app.second_instance().await?;
    let works = app
        .status_becomes(EVENTS, &secret, StatusCode::OK, crate::helpers::WAIT)
        .await?;
    assert!(works, "reconciliation must put the key into the bucket");
    Ok(())
}
