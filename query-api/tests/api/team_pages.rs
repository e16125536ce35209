//! The dashboard's shell and its team pages: roles decide the pages and the links, sessions end
//! when a member is removed or their role changes, templates escape what people type, and the
//! audit log records it all.

use crate::browser::{Browser, PASSWORD, to_sign_in};
use crate::helpers::{TestApp, eventually, text};
use reqwest::{Method, StatusCode};
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn every_page_has_a_strict_policy_and_its_assets() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let (_, login) = app.account_with_owner("Network").await?;
    let mut owner = Browser::signed_in(&app, &login, PASSWORD).await?;
    for path in [
        "/",
        "/events",
        "/funnels",
        "/team",
        "/settings",
        "/alerts",
        "/audit",
        "/login",
    ] {
        let response = owner.get(path).await?;
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        let csp = response.headers()["content-security-policy"]
            .to_str()?
            .to_owned();
        assert!(
            csp.contains("default-src 'self'") && csp.contains("script-src 'self'"),
            "{csp}"
        );
        assert!(
            csp.contains("frame-ancestors 'none'") && !csp.contains("unsafe"),
            "{csp}"
        );
        assert_eq!(response.headers()["cache-control"], "no-store");
        let html = response.text().await?;
        assert!(
            !html.contains("<script>") && !html.contains(" style="),
            "{path}: inline"
        );
        // Every asset the page links is served, with a hashed, immutable URL.
        for url in html.split('"').filter(|part| part.starts_with("/assets/")) {
            let asset = owner.get(url).await?;
            assert_eq!(asset.status(), StatusCode::OK, "{url}");
            assert!(
                asset.headers()["cache-control"]
                    .to_str()?
                    .contains("immutable")
            );
        }
    }
    Ok(())
}

#[tokio::test]
async fn a_viewer_sees_only_what_the_role_allows() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let (account, owner_login) = app.account_with_owner("Network").await?;
    app.create_member(&account, "viewer@test.local", "Vera", "viewer")
        .await?;
    let mut viewer = Browser::signed_in(&app, "viewer@test.local", PASSWORD).await?;

    let overview = viewer.page("/", StatusCode::OK).await?;
    for link in ["/servers", "/staff", "/events", "/funnels"] {
        assert!(
            overview.contains(&format!(r#"href="{link}""#)),
            "{link} missing"
        );
    }
    for link in ["/team", "/settings", "/audit"] {
        assert!(
            !overview.contains(&format!(r#"href="{link}""#)),
            "{link} shown"
        );
        let page = viewer.page(link, StatusCode::FORBIDDEN).await?;
        assert!(page.contains("not available to the Viewer role"), "{page}");
    }
    // Forms of those pages are refused too, not only their GETs.
    let response = viewer
        .post(
            "/team/invites",
            &[("login", "x@test.local"), ("role", "viewer")],
        )
        .await?;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);

    let mut owner = Browser::signed_in(&app, &owner_login, PASSWORD).await?;
    let overview = owner.page("/", StatusCode::OK).await?;
    for link in ["/team", "/settings", "/audit"] {
        assert!(
            overview.contains(&format!(r#"href="{link}""#)),
            "{link} missing"
        );
    }
    Ok(())
}

#[tokio::test]
async fn a_removed_members_open_session_is_refused_within_two_seconds() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let (account, _) = app.account_with_owner("Network").await?;
    let member = app
        .create_member(&account, "mod@test.local", "Mo", "moderator")
        .await?;
    let mut browser = Browser::signed_in(&app, "mod@test.local", PASSWORD).await?;
    browser.page("/", StatusCode::OK).await?;

    let path = format!(
        "/api/admin/accounts/{account}/members/{}",
        text(&member["id"])
    );
    let response = app.admin(Method::DELETE, &path).send().await?;
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    let cookie = browser.cookie.clone();
    let refused = eventually(Duration::from_secs(2), || {
        let mut probe = Browser::new(&app);
        probe.cookie = cookie.clone();
        async move { probe.get("/").await.is_ok_and(|r| to_sign_in(&r)) }
    })
    .await;
    assert!(refused, "the removed member's session still works");
    Ok(())
}

#[tokio::test]
async fn a_role_change_ends_the_members_sessions() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let (account, owner_login) = app.account_with_owner("Network").await?;
    let member = app
        .create_member(&account, "ada@test.local", "Ada", "viewer")
        .await?;
    let member_id = text(&member["id"]);
    let mut ada = Browser::signed_in(&app, "ada@test.local", PASSWORD).await?;

    // Through the team page, by the owner.
    let mut owner = Browser::signed_in(&app, &owner_login, PASSWORD).await?;
    let response = owner
        .post(
            &format!("/team/members/{member_id}/role"),
            &[("role", "admin")],
        )
        .await?;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    assert!(to_sign_in(&ada.get("/").await?));

    // Signed in again, Ada is an admin: the team page opens, and she cannot make an owner.
    let mut ada = Browser::signed_in(&app, "ada@test.local", PASSWORD).await?;
    let team = ada.page("/team", StatusCode::OK).await?;
    assert!(
        !team.contains(r#"value="owner""#),
        "an admin is offered the owner role"
    );
    let response = ada
        .post(
            &format!("/team/members/{member_id}/role"),
            &[("role", "owner")],
        )
        .await?;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert!(response.text().await?.contains("only an owner"));

    // Through the admin API: the session ends again.
    let path = format!("/api/admin/accounts/{account}/members/{member_id}");
    let response = app
        .admin(Method::PATCH, &path)
        .json(&json!({ "role": "moderator" }))
        .send()
        .await?;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(to_sign_in(&ada.get("/").await?));
    Ok(())
}

#[tokio::test]
async fn a_password_change_ends_the_members_sessions() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let (account, _) = app.account_with_owner("Network").await?;
    let member = app
        .create_member(&account, "pat@test.local", "Pat", "viewer")
        .await?;
    let mut pat = Browser::signed_in(&app, "pat@test.local", PASSWORD).await?;
    let member =
        query_api::team::members::get(&app.db.pool, account.parse()?, text(&member["id"]).parse()?)
            .await?;
    let actor = query_api::team::Actor::command_line();
    let new_password = "a brand new passphrase";
    query_api::team::members::set_password(&app.db.pool, &member, new_password, &actor).await?;
    assert!(to_sign_in(&pat.get("/").await?));
    let old = Browser::new(&app)
        .sign_in("pat@test.local", PASSWORD)
        .await?;
    assert_eq!(old.status(), StatusCode::UNAUTHORIZED);
    Browser::signed_in(&app, "pat@test.local", new_password).await?;
    Ok(())
}

#[tokio::test]
async fn the_last_owner_stays() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let (account, owner_login) = app.account_with_owner("Network").await?;
    let mut owner = Browser::signed_in(&app, &owner_login, PASSWORD).await?;
    let members = app
        .admin(
            Method::GET,
            &format!("/api/admin/accounts/{account}/members"),
        )
        .send()
        .await?
        .json::<serde_json::Value>()
        .await?;
    let owner_id = text(&members["items"][0]["id"]);
    let response = owner
        .post(&format!("/team/members/{owner_id}/remove"), &[])
        .await?;
    assert_eq!(response.status(), StatusCode::CONFLICT);
    assert!(response.text().await?.contains("at least one owner"));
    let path = format!("/api/admin/accounts/{account}/members/{owner_id}");
    let response = app.admin(Method::DELETE, &path).send().await?;
    crate::helpers::problem(response, StatusCode::CONFLICT, "last_owner").await?;
    owner.page("/team", StatusCode::OK).await?;
    Ok(())
}

#[tokio::test]
async fn templates_escape_hostile_names() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let account = app
        .create_account("<script>alert('account')</script>")
        .await?;
    let hostile = r#"<img src=x onerror="alert(1)">"#;
    app.create_member(&account, "owner@evil.test", hostile, "owner")
        .await?;
    let mut owner = Browser::signed_in(&app, "owner@evil.test", PASSWORD).await?;
    for path in ["/", "/team", "/audit"] {
        let html = owner.page(path, StatusCode::OK).await?;
        assert!(!html.contains("<script>alert"), "{path}: {html}");
        assert!(!html.contains("<img src=x"), "{path}");
        if path != "/audit" {
            assert!(escaped(&html, "script>alert("), "{path}: {html}");
        }
    }
    let team = owner.page("/team", StatusCode::OK).await?;
    assert!(escaped(&team, "<img src=x onerror="), "{team}");
    Ok(())
}

/// Whether `html` holds `raw` with its `<`, `>` and `"` escaped (named or numeric entities).
fn escaped(html: &str, raw: &str) -> bool {
    let numeric = raw
        .replace('<', "&#60;")
        .replace('>', "&#62;")
        .replace('"', "&#34;");
    let named = raw
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;");
    html.contains(&numeric) || html.contains(&named)
}
