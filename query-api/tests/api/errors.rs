//! Problem details for routing and body errors, in the contract's order.

use crate::helpers::{TestApp, problem};
use reqwest::{Method, StatusCode};

#[tokio::test]
async fn routing_and_body_errors_are_problem_details() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;

    let response = app.get_with("/api/no-such-thing", None).await?;
    problem(response, StatusCode::NOT_FOUND, "not_found").await?;

    let response = app
        .admin(Method::DELETE, "/api/admin/accounts")
        .send()
        .await?;
    let allow = response
        .headers()
        .get("allow")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    assert!(
        allow.contains("GET") && allow.contains("POST"),
        "Allow: {allow}"
    );
    problem(
        response,
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
    )
    .await?;

    let response = app
        .admin(Method::POST, "/api/admin/accounts")
        .header("content-type", "text/plain")
        .body(r#"{"name":"x"}"#)
        .send()
        .await?;
    problem(
        response,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
    )
    .await?;
    let response = app
        .admin(Method::POST, "/api/admin/accounts")
        .body(r#"{"name":"x"}"#)
        .send()
        .await?;
    problem(
        response,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
    )
    .await?;

    let response = app
        .admin(Method::POST, "/api/admin/accounts")
        .header("content-type", "application/json")
        .body(r#"{"name": "#)
        .send()
        .await?;
    problem(response, StatusCode::BAD_REQUEST, "malformed_json").await?;
    let response = app
        .admin(Method::POST, "/api/admin/accounts")
        .header("content-type", "application/json")
        .body(r#"{"name": 42}"#)
        .send()
        .await?;
    problem(response, StatusCode::BAD_REQUEST, "malformed_json").await?;

    let huge = format!(r#"{{"name": "{}"}}"#, "x".repeat(1024 * 1024 + 1));
    let response = app
        .admin(Method::POST, "/api/admin/accounts")
        .header("content-type", "application/json")
        .body(huge)
        .send()
        .await?;
    problem(response, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large").await?;
    Ok(())
}

#[tokio::test]
async fn a_500_from_a_failed_query_names_no_internals() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let account = app.create_account("Broken").await?;
    sqlx::query("DROP TABLE reviews CASCADE")
        .execute(&app.db.pool)
        .await?;
    sqlx::query("DROP TABLE api_keys CASCADE")
        .execute(&app.db.pool)
        .await?;

    let public = app.get_with("/api/public/reviews", None).await?;
    let admin = app
        .admin(Method::GET, &format!("/api/admin/accounts/{account}/keys"))
        .send()
        .await?;
    for response in [public, admin] {
        let body = problem(response, StatusCode::INTERNAL_SERVER_ERROR, "internal").await?;
        let text = body.to_string().to_lowercase();
        for internal in [
            "relation",
            "reviews",
            "api_keys",
            "sql",
            "postgres",
            "select",
            "does not exist",
            "database",
            "query",
        ] {
            assert!(!text.contains(internal), "'{internal}' in {text}");
        }
    }
    Ok(())
}
