//! Invites (single-use, expiring), the settings page (a key's secret shown once) and the audit
//! log that records every step.

use crate::browser::{Browser, PASSWORD, to_sign_in};
use crate::helpers::{TestApp, problem, text};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

async fn invite(app: &TestApp, account: &str, login: &str, role: &str) -> anyhow::Result<Value> {
    let response = app
        .admin(
            Method::POST,
            &format!("/api/admin/accounts/{account}/invites"),
        )
        .json(&json!({ "login": login, "role": role, "expires_in_seconds": 3600 }))
        .send()
        .await?;
    assert_eq!(response.status(), StatusCode::CREATED);
    Ok(response.json().await?)
}

fn accept_form(name: &str) -> [(&'static str, String); 3] {
    [
        ("display_name", name.to_owned()),
        ("password", PASSWORD.to_owned()),
        ("password_confirm", PASSWORD.to_owned()),
    ]
}

async fn accept(
    browser: &mut Browser,
    path: &str,
    name: &str,
) -> anyhow::Result<reqwest::Response> {
    let form = accept_form(name);
    let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
    browser.post(path, &form).await
}

#[tokio::test]
async fn an_invite_works_once_and_signs_the_new_member_in() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let (account, _) = app.account_with_owner("Network").await?;
    let issued = invite(&app, &account, "New.Mod@Test.local", "moderator").await?;
    let path = text(&issued["path"]);
    assert!(path.starts_with("/invite/wdn_invite_"), "{path}");
    assert_eq!(issued["login"], "new.mod@test.local");

    let mut browser = Browser::new(&app);
    let page = browser.page(&path, StatusCode::OK).await?;
    assert!(
        page.contains("Moderator") && page.contains("new.mod@test.local"),
        "{page}"
    );
    // Mismatched passwords: the form again, nothing used up.
    let mismatch = [
        ("display_name", "Mo"),
        ("password", PASSWORD),
        ("password_confirm", "x"),
    ];
    let response = browser.post(&path, &mismatch).await?;
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);

    let response = accept(&mut browser, &path, "Mo").await?;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let overview = browser.page("/", StatusCode::OK).await?;
    assert!(
        overview.contains("Mo") && overview.contains("Moderator"),
        "{overview}"
    );

    // Used: the link is dead for anyone else.
    let mut other = Browser::new(&app);
    other.page(&path, StatusCode::GONE).await?;
    let response = accept(&mut other, &path, "Eve").await?;
    assert_eq!(response.status(), StatusCode::GONE);
    assert!(other.cookie.is_none());
    let members: Value = app
        .admin(
            Method::GET,
            &format!("/api/admin/accounts/{account}/members"),
        )
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(members["items"].as_array().map(Vec::len), Some(2));

    // Inviting a login that is taken is refused.
    let response = app
        .admin(
            Method::POST,
            &format!("/api/admin/accounts/{account}/invites"),
        )
        .json(&json!({ "login": "new.mod@test.local", "role": "viewer" }))
        .send()
        .await?;
    problem(response, StatusCode::CONFLICT, "login_taken").await?;
    Ok(())
}

#[tokio::test]
async fn an_expired_or_withdrawn_invite_does_not_work() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let (account, owner_login) = app.account_with_owner("Network").await?;
    let expired = invite(&app, &account, "late@test.local", "viewer").await?;
    sqlx::query("UPDATE team_invites SET expires_at = now() - interval '1 second' WHERE id = $1")
        .bind(text(&expired["id"]).parse::<uuid::Uuid>()?)
        .execute(&app.db.pool)
        .await?;
    let mut browser = Browser::new(&app);
    browser
        .page(&text(&expired["path"]), StatusCode::GONE)
        .await?;
    let response = accept(&mut browser, &text(&expired["path"]), "Late").await?;
    assert_eq!(response.status(), StatusCode::GONE);

    // Withdrawn on the team page by the owner.
    let withdrawn = invite(&app, &account, "gone@test.local", "viewer").await?;
    let mut owner = Browser::signed_in(&app, &owner_login, PASSWORD).await?;
    let team = owner.page("/team", StatusCode::OK).await?;
    assert!(team.contains("gone@test.local") && !team.contains("late@test.local"));
    let revoke = format!("/team/invites/{}/revoke", text(&withdrawn["id"]));
    assert_eq!(
        owner.post(&revoke, &[]).await?.status(),
        StatusCode::SEE_OTHER
    );
    browser
        .page(&text(&withdrawn["path"]), StatusCode::GONE)
        .await?;

    // Out-of-range expiry is a 422 on the admin API.
    let response = app
        .admin(
            Method::POST,
            &format!("/api/admin/accounts/{account}/invites"),
        )
        .json(&json!({ "login": "x@test.local", "role": "viewer", "expires_in_seconds": 5 }))
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
async fn the_team_page_invites_with_a_link_shown_once() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let (_, owner_login) = app.account_with_owner("Network").await?;
    let mut owner = Browser::signed_in(&app, &owner_login, PASSWORD).await?;
    let form = [
        ("login", "helper@test.local"),
        ("role", "viewer"),
        ("expires_in_days", "1"),
    ];
    let response = owner.post("/team/invites", &form).await?;
    assert_eq!(response.status(), StatusCode::OK);
    let page = response.text().await?;
    let start = page.find("/invite/wdn_invite_").unwrap_or(0);
    let path = &page[start..start + "/invite/wdn_invite_".len() + 64];
    assert!(
        page.contains(&app.url(path)),
        "the link carries the dashboard's origin"
    );
    // The listing never shows it again.
    let team = owner.page("/team", StatusCode::OK).await?;
    assert!(!team.contains("wdn_invite_") && team.contains("helper@test.local"));
    let mut newcomer = Browser::new(&app);
    let response = accept(&mut newcomer, path, "Helper").await?;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    Ok(())
}

#[tokio::test]
async fn the_settings_page_manages_keys_and_settings() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let (_, owner_login) = app.account_with_owner("Network").await?;
    let mut owner = Browser::signed_in(&app, &owner_login, PASSWORD).await?;
    let response = owner
        .post(
            "/settings/keys",
            &[("kind", "plugin"), ("label", "lobby-1")],
        )
        .await?;
    assert_eq!(response.status(), StatusCode::OK);
    let page = response.text().await?;
    let start = page.find("wdn_plugin_").unwrap_or(0);
    let secret = page[start..]
        .split('<')
        .next()
        .unwrap_or_default()
        .to_owned();
    assert!(secret.len() > 20, "{page}");
    let listing = owner.page("/settings", StatusCode::OK).await?;
    assert!(listing.contains("lobby-1") && !listing.contains(&secret));

    let saved = [
        ("staff_groups", "Admin\nMods"),
        ("sync_interval_seconds", "30"),
    ];
    assert_eq!(
        owner.post("/settings/general", &saved).await?.status(),
        StatusCode::SEE_OTHER
    );
    let page = owner
        .page("/settings?notice=settings_saved", StatusCode::OK)
        .await?;
    assert!(
        page.contains("Settings saved") && page.contains("Admin\nMods"),
        "{page}"
    );
    let bad = [("staff_groups", "x"), ("sync_interval_seconds", "0")];
    let response = owner.post("/settings/general", &bad).await?;
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
    Ok(())
}

#[tokio::test]
async fn the_audit_log_records_sign_ins_and_changes() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let (account, owner_login) = app.account_with_owner("Network").await?;
    let member = app
        .create_member(&account, "temp@test.local", "Temp", "viewer")
        .await?;
    let mut browser = Browser::new(&app);
    browser
        .sign_in(&owner_login, "wrong password given")
        .await?;
    browser
        .sign_in("nobody@test.local", "wrong password given")
        .await?;
    let mut owner = Browser::signed_in(&app, &owner_login, PASSWORD).await?;
    let id = text(&member["id"]);
    owner
        .post(
            &format!("/team/members/{id}/role"),
            &[("role", "moderator")],
        )
        .await?;
    owner
        .post(
            "/team/invites",
            &[("login", "inv@test.local"), ("role", "viewer")],
        )
        .await?;
    owner
        .post(&format!("/team/members/{id}/remove"), &[])
        .await?;

    let actions: Vec<(String, Option<String>, Option<String>)> = sqlx::query_as(
        "SELECT action, target, ip_hash FROM audit_log WHERE account_id = $1::uuid ORDER BY id",
    )
    .bind(&account)
    .fetch_all(&app.db.pool)
    .await?;
    let names: Vec<&str> = actions.iter().map(|(a, _, _)| a.as_str()).collect();
    assert_eq!(
        names,
        [
            "member_created",
            "member_created",
            "sign_in_failed",
            "sign_in",
            "member_role_changed",
            "member_invited",
            "member_removed",
        ]
    );
    // Addresses only as a keyed hash (64 hex digits), never in clear.
    let hash = actions[2].2.clone().unwrap_or_default();
    assert!(hash.len() == 64 && !hash.contains("127.0.0.1"), "{hash}");
    // The unknown login's failure is kept outside any account.
    let orphan: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM audit_log WHERE account_id IS NULL AND actor = 'nobody@test.local'",
    )
    .fetch_one(&app.db.pool)
    .await?;
    assert_eq!(orphan, 1);

    let page = owner.page("/audit", StatusCode::OK).await?;
    let removed = page.find("member_removed").unwrap_or(usize::MAX);
    let failed = page.find("sign_in_failed").unwrap_or(0);
    assert!(removed < failed, "newest first: {page}");
    let mut gone = Browser::new(&app);
    gone.cookie = None;
    assert!(to_sign_in(&gone.get("/audit").await?));
    Ok(())
}
