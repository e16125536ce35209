//! Reviews and exchange rates: written by the admin API, read without a key.

use crate::helpers::{TestApp, error_fields, problem, text};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use uuid::Uuid;

async fn create_review(app: &TestApp, author: &str, published: bool) -> anyhow::Result<Value> {
    let response = app
        .admin(Method::POST, "/api/admin/reviews")
        .json(&json!({"author": author, "rating": 5, "title": "Great", "body": "Works well.", "published": published}))
        .send()
        .await?;
    assert_eq!(response.status(), StatusCode::CREATED);
    Ok(response.json().await?)
}

async fn public_authors(app: &TestApp) -> anyhow::Result<Vec<String>> {
    let response = app.get_with("/api/public/reviews", None).await?;
    assert_eq!(response.status(), StatusCode::OK);
    let body: Value = response.json().await?;
    Ok(body["items"]
        .as_array()
        .map(|items| items.iter().map(|r| text(&r["author"])).collect())
        .unwrap_or_default())
}

#[tokio::test]
async fn only_published_reviews_are_public_newest_first() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let first = create_review(&app, "ann", true).await?;
    assert!(first["published_at"].is_string());
    for field in [
        "id",
        "author",
        "rating",
        "title",
        "body",
        "published",
        "created_at",
    ] {
        assert!(first.get(field).is_some(), "missing {field}");
    }
    create_review(&app, "bob", true).await?;
    let draft = create_review(&app, "cat", false).await?;
    assert!(draft["published_at"].is_null());
    assert_eq!(public_authors(&app).await?, ["bob", "ann"]);

    let path = format!("/api/admin/reviews/{}", text(&draft["id"]));
    let response = app
        .admin(Method::PATCH, &path)
        .json(&json!({"published": true, "title": null}))
        .send()
        .await?;
    assert_eq!(response.status(), StatusCode::OK);
    let patched: Value = response.json().await?;
    assert_eq!(patched["published"], true);
    assert!(patched["published_at"].is_string());
    assert!(patched["title"].is_null());
    assert_eq!(patched["body"], "Works well.");
    assert_eq!(public_authors(&app).await?, ["cat", "bob", "ann"]);

    let response = app
        .admin(
            Method::PATCH,
            &format!("/api/admin/reviews/{}", text(&first["id"])),
        )
        .json(&json!({"published": false}))
        .send()
        .await?;
    let unpublished: Value = response.json().await?;
    assert!(unpublished["published_at"].is_null());
    assert_eq!(public_authors(&app).await?, ["cat", "bob"]);

    let response = app.admin(Method::DELETE, &path).send().await?;
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    assert_eq!(public_authors(&app).await?, ["bob"]);
    let response = app.admin(Method::DELETE, &path).send().await?;
    problem(response, StatusCode::NOT_FOUND, "not_found").await?;
    let response = app
        .admin(
            Method::PATCH,
            &format!("/api/admin/reviews/{}", Uuid::now_v7()),
        )
        .json(&json!({"published": true}))
        .send()
        .await?;
    problem(response, StatusCode::NOT_FOUND, "not_found").await?;

    let response = app
        .admin(Method::POST, "/api/admin/reviews")
        .json(&json!({"author": "", "rating": 6, "body": "", "published": true}))
        .send()
        .await?;
    let body = problem(
        response,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    )
    .await?;
    assert_eq!(error_fields(&body), ["author", "rating", "body"]);
    Ok(())
}

#[tokio::test]
async fn exchange_rates_have_a_gbp_base() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let initial: Value = app
        .get_with("/api/public/exchange-rates", None)
        .await?
        .json()
        .await?;
    assert_eq!(
        initial,
        json!({"base": "GBP", "rates": {"GBP": 1.0}, "updated_at": null})
    );

    let response = app
        .admin(Method::PUT, "/api/admin/exchange-rates")
        .json(&json!({"base": "GBP", "rates": {"USD": 1.27, "EUR": 1.17}}))
        .send()
        .await?;
    assert_eq!(response.status(), StatusCode::OK);
    let public: Value = app
        .get_with("/api/public/exchange-rates", None)
        .await?
        .json()
        .await?;
    assert_eq!(
        public["rates"],
        json!({"EUR": 1.17, "GBP": 1.0, "USD": 1.27})
    );
    assert!(text(&public["updated_at"]).ends_with('Z'));

    // The table is replaced whole.
    app.admin(Method::PUT, "/api/admin/exchange-rates")
        .json(&json!({"base": "GBP", "rates": {"USD": 1.3}}))
        .send()
        .await?;
    let public: Value = app
        .get_with("/api/public/exchange-rates", None)
        .await?
        .json()
        .await?;
    assert_eq!(public["rates"], json!({"GBP": 1.0, "USD": 1.3}));

    for (body, field) in [
        (json!({"base": "USD", "rates": {}}), "base"),
        (json!({"base": "GBP", "rates": {"usd": 1.2}}), "rates.usd"),
        (json!({"base": "GBP", "rates": {"USDT": 1.2}}), "rates.USDT"),
        (json!({"base": "GBP", "rates": {"USD": 0}}), "rates.USD"),
        (json!({"base": "GBP", "rates": {"USD": -2.5}}), "rates.USD"),
    ] {
        let response = app
            .admin(Method::PUT, "/api/admin/exchange-rates")
            .json(&body)
            .send()
            .await?;
        let problem = problem(
            response,
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_failed",
        )
        .await?;
        assert_eq!(error_fields(&problem), [field]);
    }
    let response = app
        .client
        .put(app.url("/api/admin/exchange-rates"))
        .json(&json!({"base": "GBP", "rates": {}}))
        .send()
        .await?;
    problem(response, StatusCode::UNAUTHORIZED, "missing_credentials").await?;
    Ok(())
}
