//! Admin bodies and query parameters that PostgreSQL could not hold (a NUL in text,
//! times at the edge of the representable range) are 422 problems, never 500.

use crate::helpers::{TestApp, problem, text};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// `(field, code)` of each of a problem's `errors`.
fn field_codes(problem: &Value) -> Vec<(String, String)> {
    problem["errors"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|e| (text(&e["field"]), text(&e["code"])))
        .collect()
}

fn nul_in(field: &str) -> Vec<(String, String)> {
    vec![(field.to_owned(), "invalid_characters".to_owned())]
}

#[tokio::test]
async fn a_nul_in_any_admin_text_is_a_422_naming_the_field() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let account = app.create_account("Net").await?;
    let review = json!({"author": "Ann", "rating": 5, "body": "Great"});
    let created: Value = app
        .admin(Method::POST, "/api/admin/reviews")
        .json(&review)
        .send()
        .await?
        .json()
        .await?;
    let review_path = format!("/api/admin/reviews/{}", text(&created["id"]));
    let with = |field: &str| {
        let mut body = review.clone();
        body[field] = json!("x\u{0}y");
        body
    };
    let cases = [
        (
            Method::POST,
            "/api/admin/accounts".to_owned(),
            json!({"name": "a\u{0}"}),
            "name",
        ),
        (
            Method::POST,
            format!("/api/admin/accounts/{account}/keys"),
            json!({"kind": "plugin", "label": "\u{0}"}),
            "label",
        ),
        (
            Method::POST,
            "/api/admin/reviews".to_owned(),
            with("author"),
            "author",
        ),
        (
            Method::POST,
            "/api/admin/reviews".to_owned(),
            with("title"),
            "title",
        ),
        (
            Method::POST,
            "/api/admin/reviews".to_owned(),
            with("body"),
            "body",
        ),
        (Method::PATCH, review_path, json!({"body": "\u{0}"}), "body"),
        (
            Method::PUT,
            format!("/api/admin/accounts/{account}/settings"),
            json!({"staff_groups": ["admin", "m\u{0}d"], "sync_interval_seconds": 15}),
            "staff_groups[1]",
        ),
    ];
    for (method, path, body, field) in cases {
        let response = app.admin(method.clone(), &path).json(&body).send().await?;
        let body = problem(
            response,
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_failed",
        )
        .await?;
        assert_eq!(field_codes(&body), nul_in(field), "{method} {path}");
    }

    let response = app
        .admin(Method::PUT, "/api/admin/exchange-rates")
        .json(&json!({"base": "GBP", "rates": {"U\u{0}D": 1.2}}))
        .send()
        .await?;
    let body = problem(
        response,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    )
    .await?;
    assert_eq!(
        field_codes(&body),
        [("rates.U\u{0}D".to_owned(), "invalid_currency".to_owned())]
    );
    Ok(())
}

#[tokio::test]
async fn events_time_bounds_outside_1970_to_9999_are_a_422() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let (_, key) = app.account_with_dashboard_key().await?;
    let secret = text(&key["key"]);
    for (query, field) in [
        ("from=0000-01-01T00:00:00Z", "from"),
        ("to=9999-12-31T23:59:59-12:00", "to"),
        ("from=1969-12-31T23:59:59Z&to=2025-01-01T00:00:00Z", "from"),
    ] {
        let response = app
            .get_with(&format!("/api/v1/events?{query}"), Some(&secret))
            .await?;
        let body = problem(
            response,
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_failed",
        )
        .await?;
        assert_eq!(
            field_codes(&body),
            [(field.to_owned(), "out_of_range".to_owned())],
            "{query}"
        );
    }
    // A forged cursor names a time PostgreSQL cannot hold (year -253000): refused, not sent.
    for cursor in ["-8000000000000000000_1", "8000000000000000000_1"] {
        let response = app
            .get_with(&format!("/api/v1/events?cursor={cursor}"), Some(&secret))
            .await?;
        let body = problem(
            response,
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_failed",
        )
        .await?;
        assert_eq!(
            field_codes(&body),
            [("cursor".to_owned(), "invalid_cursor".to_owned())]
        );
    }
    let response = app
        .get_with(
            "/api/v1/events?from=1970-01-01T00:00:00Z&to=9999-12-31T23:59:59Z",
            Some(&secret),
        )
        .await?;
    assert_eq!(
        response.status(),
        StatusCode::OK,
        "the widest range is fine"
    );
    Ok(())
}
