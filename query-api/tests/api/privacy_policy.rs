//! An account's privacy policy: `GET/PUT /api/admin/accounts/{id}/privacy` and the
//! settings page's "Data retention" section, both stored in the privacy accounts bucket and
//! audited.

use crate::browser::{Browser, PASSWORD};
use crate::helpers::{TestApp, error_fields, problem, text};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

fn path(account: &str) -> String {
    format!("/api/admin/accounts/{account}/privacy")
}

async fn get_policy(app: &TestApp, account: &str) -> anyhow::Result<Value> {
    let response = app.admin(Method::GET, &path(account)).send().await?;
    assert_eq!(response.status(), StatusCode::OK);
    Ok(response.json().await?)
}

#[tokio::test]
async fn privacy_policy_is_read_set_and_kept_per_account() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let (account, other) = (
        app.create_account("Net").await?,
        app.create_account("Other").await?,
    );
    // Until one is set: everything forever, no property kept in clear (all sealed).
    let empty = json!({
        "retention": {"chat": null, "ip_hashes": null, "sessions": null,
                      "custom_events": null, "anticheat_flags": null},
        "clear_properties": [],
    });
    assert_eq!(get_policy(&app, &account).await?, empty);

    let policy = json!({
        "retention": {"chat": 90, "ip_hashes": 30},
        "clear_properties": ["item", "price"],
    });
    let response = app
        .admin(Method::PUT, &path(&account))
        .json(&policy)
        .send()
        .await?;
    assert_eq!(response.status(), StatusCode::OK);
    let stored = json!({
        "retention": {"chat": 90, "ip_hashes": 30, "sessions": null,
                      "custom_events": null, "anticheat_flags": null},
        "clear_properties": ["item", "price"],
    });
    assert_eq!(response.json::<Value>().await?, stored);
    assert_eq!(get_policy(&app, &account).await?, stored);
    // Another account's policy is its own.
    assert_eq!(get_policy(&app, &other).await?, empty);

    // A second instance (its own cache) reads the same bucket.
    let second = app.second_instance().await?;
    let seen: Value = app
        .client
        .get(format!("http://{}{}", second.addr, path(&account)))
        .bearer_auth(&app.admin_key)
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(seen, stored);

    // Audited, with what changed.
    let (actor, detail): (String, Value) = sqlx::query_as(
        "SELECT actor, detail FROM audit_log
         WHERE account_id = $1::uuid AND action = 'privacy_policy_changed'",
    )
    .bind(&account)
    .fetch_one(&app.db.pool)
    .await?;
    assert_eq!(actor, "admin key");
    assert_eq!(detail["policy"], stored);
    assert_eq!(
        detail["changes"],
        json!([
            "Chat messages and commands: forever → 90 days",
            "Sessions' IP hashes: forever → 30 days",
            "Custom-event properties kept in clear: none → item, price",
        ])
    );
    Ok(())
}

/// Clients written for the old policy shape send `personal_properties`: still accepted (every
/// property not kept in clear is sealed, so the names need no listing), never stored nor
/// returned.
#[tokio::test]
async fn the_old_personal_properties_field_is_accepted_and_dropped() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let account = app.create_account("Net").await?;
    let old = json!({"retention": {"chat": 30}, "personal_properties": ["email"]});
    let response = app
        .admin(Method::PUT, &path(&account))
        .json(&old)
        .send()
        .await?;
    assert_eq!(response.status(), StatusCode::OK);
    let stored = json!({
        "retention": {"chat": 30, "ip_hashes": null, "sessions": null,
                      "custom_events": null, "anticheat_flags": null},
        "clear_properties": [],
    });
    assert_eq!(response.json::<Value>().await?, stored);
    assert_eq!(get_policy(&app, &account).await?, stored);

    // With the new list, the old one keeps its meaning: a name it lists stays sealed.
    let both = json!({"clear_properties": ["email", "item"], "personal_properties": ["email"]});
    let response = app
        .admin(Method::PUT, &path(&account))
        .json(&both)
        .send()
        .await?;
    assert_eq!(response.status(), StatusCode::OK);
    let kept = get_policy(&app, &account).await?;
    assert_eq!(kept["clear_properties"], json!(["item"]), "{kept}");
    assert!(kept.get("personal_properties").is_none(), "{kept}");

    // The document says so: the old field is deprecated and never returned.
    let response = app.get_with("/api/openapi.json", None).await?;
    let doc: Value = response.json().await?;
    let fields = &doc["components"]["schemas"]["PrivacyPolicy"]["properties"];
    assert_eq!(
        fields["personal_properties"]["deprecated"], true,
        "{fields}"
    );
    assert_eq!(fields["clear_properties"]["maxItems"], 64, "{fields}");
    assert_eq!(fields["clear_properties"]["uniqueItems"], true, "{fields}");
    Ok(())
}

#[tokio::test]
async fn privacy_policy_breaking_a_rule_is_422_and_changes_nothing() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let account = app.create_account("Net").await?;
    let kept = json!({"retention": {"chat": 7}, "clear_properties": []});
    let response = app
        .admin(Method::PUT, &path(&account))
        .json(&kept)
        .send()
        .await?;
    assert_eq!(response.status(), StatusCode::OK);

    let bad = json!({
        "retention": {"chat": 0, "sessions": 36501},
        "clear_properties": ["item", "", "item"],
    });
    let response = app
        .admin(Method::PUT, &path(&account))
        .json(&bad)
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
            "retention.chat",
            "retention.sessions",
            "clear_properties[1]",
            "clear_properties[2]",
        ]
    );
    assert_eq!(get_policy(&app, &account).await?["retention"]["chat"], 7);

    // Unknown fields and wrong shapes are problems too, never a 5xx.
    for body in [
        json!({"retention": {"chats": 5}}),
        json!({"retention": {"chat": -1}}),
        json!({"retention": {"chat": "90"}}),
        json!({"personal_properties": "email"}),
        json!({"clear_properties": "item"}),
        json!([]),
        // serde reads a struct from an array of its fields too; the schema does not allow it.
        json!({"retention": [90, 30, null, null, null]}),
        json!({"retention": null}),
    ] {
        let response = app
            .admin(Method::PUT, &path(&account))
            .json(&body)
            .send()
            .await?;
        assert!(
            response.status().is_client_error(),
            "{body} answered {}",
            response.status()
        );
        assert_eq!(
            response.headers().get("content-type").map(|v| v.as_bytes()),
            Some(&b"application/problem+json"[..])
        );
    }
    let too_many: Vec<String> = (0..65).map(|i| format!("p{i}")).collect();
    for list in ["clear_properties", "personal_properties"] {
        let response = app
            .admin(Method::PUT, &path(&account))
            .json(&json!({list: too_many}))
            .send()
            .await?;
        let body = problem(
            response,
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_failed",
        )
        .await?;
        assert_eq!(error_fields(&body), [list]);
    }
    Ok(())
}

#[tokio::test]
async fn privacy_policy_needs_the_admin_key_and_a_known_account() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let account = app.create_account("Net").await?;
    let dashboard = text(&app.create_key(&account, "dashboard").await?["key"]);

    let unknown = path(&uuid::Uuid::now_v7().to_string());
    let response = app.admin(Method::GET, &unknown).send().await?;
    problem(response, StatusCode::NOT_FOUND, "not_found").await?;
    let response = app
        .admin(Method::PUT, &unknown)
        .json(&json!({"retention": {"chat": 5}}))
        .send()
        .await?;
    problem(response, StatusCode::NOT_FOUND, "not_found").await?;

    let response = app.get_with(&path(&account), None).await?;
    problem(response, StatusCode::UNAUTHORIZED, "missing_credentials").await?;
    let forbidden = app
        .status_becomes(
            &path(&account),
            &dashboard,
            StatusCode::FORBIDDEN,
            crate::helpers::WAIT,
        )
        .await?;
    assert!(
        forbidden,
        "a dashboard key must not read the privacy policy"
    );
    let response = app
        .client
        .put(app.url(&path(&account)))
        .bearer_auth(&dashboard)
        .json(&json!({"retention": {"chat": 1}}))
        .send()
        .await?;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert_eq!(
        get_policy(&app, &account).await?["retention"]["chat"],
        json!(null)
    );
    Ok(())
}

#[tokio::test]
async fn privacy_settings_section_saves_and_shows_what_changed() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let (account, owner_login) = app.account_with_owner("Network").await?;
    let mut owner = Browser::signed_in(&app, &owner_login, PASSWORD).await?;
    let page = owner.page("/settings", StatusCode::OK).await?;
    assert!(
        page.contains("Data retention") && page.contains("name=\"chat\""),
        "{page}"
    );

    let form = [
        ("chat", "90"),
        ("ip_hashes", "30"),
        ("sessions", ""),
        ("custom_events", ""),
        ("anticheat_flags", "365"),
        ("clear_properties", "item\nprice"),
    ];
    let response = owner.post("/settings/privacy", &form).await?;
    assert_eq!(response.status(), StatusCode::OK);
    let page = response.text().await?;
    assert!(
        page.contains("Chat messages and commands: forever → 90 days")
            && page.contains("Anti-cheat flags: forever → 365 days")
            && page.contains("value=\"90\""),
        "{page}"
    );
    let stored = get_policy(&app, &account).await?;
    assert_eq!(stored["retention"]["chat"], 90);
    assert_eq!(stored["retention"]["sessions"], json!(null));
    assert_eq!(stored["clear_properties"], json!(["item", "price"]));
    let actor: String = sqlx::query_scalar(
        "SELECT actor FROM audit_log
         WHERE account_id = $1::uuid AND action = 'privacy_policy_changed'",
    )
    .bind(&account)
    .fetch_one(&app.db.pool)
    .await?;
    assert!(actor.contains(&owner_login), "{actor}");

    // Saving the same again changes nothing, and says so.
    let page = owner.post("/settings/privacy", &form).await?.text().await?;
    assert!(page.contains("nothing changed"), "{page}");

    // Refused: the page again with the reason, and the policy as it was.
    let bad = [("chat", "ninety"), ("clear_properties", "")];
    let response = owner.post("/settings/privacy", &bad).await?;
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let response = owner.post("/settings/privacy", &[("chat", "0")]).await?;
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(get_policy(&app, &account).await?["retention"]["chat"], 90);

    // Below admin the page (and its form) is not theirs.
    app.create_member(&account, "mod@test.local", "Mod", "moderator")
        .await?;
    let mut moderator = Browser::signed_in(&app, "mod@test.local", PASSWORD).await?;
    moderator.page("/settings", StatusCode::FORBIDDEN).await?;
    let response = moderator
        .post("/settings/privacy", &[("chat", "1")])
        .await?;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert_eq!(get_policy(&app, &account).await?["retention"]["chat"], 90);
    Ok(())
}
