//! Signing in to the dashboard: one answer for every failure, throttling, the cookie's flags,
//! no session fixation, sign-out, and same-origin state changes.

use crate::browser::{Browser, PASSWORD, SESSION_COOKIE, to_sign_in};
use crate::helpers::TestApp;
use reqwest::StatusCode;

#[tokio::test]
async fn a_member_signs_in_and_out_with_a_strict_cookie() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let (_, login) = app.account_with_owner("Network").await?;
    let mut browser = Browser::new(&app);

    // No session: the overview sends the browser to the sign-in page.
    assert!(to_sign_in(&browser.get("/").await?));
    let form = browser.page("/login", StatusCode::OK).await?;
    assert!(
        form.contains(r#"<form method="post" action="/login""#),
        "{form}"
    );

    let response = browser.sign_in(&login.to_uppercase(), PASSWORD).await?;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    assert_eq!(response.headers()["location"], "/");
    let set_cookie = browser.last_set_cookie.clone().unwrap_or_default();
    let token = browser.token().unwrap_or_default();
    assert!(
        token.starts_with("wdn_session_") && token.len() == 12 + 64,
        "{token}"
    );
    assert_eq!(
        set_cookie,
        format!("{SESSION_COOKIE}={token}; Max-Age=604800; Path=/; HttpOnly; SameSite=Lax; Secure")
    );
    // Stored only hashed.
    let stored: i64 =
        sqlx::query_scalar("SELECT count(*) FROM team_sessions WHERE token_hash = $1")
            .bind(&token)
            .fetch_one(&app.db.pool)
            .await?;
    assert_eq!(stored, 0, "the token itself is never stored");

    let overview = browser.page("/", StatusCode::OK).await?;
    assert!(overview.contains("The Owner"), "{overview}");
    assert!(overview.contains("Servers online"), "{overview}");

    let response = browser.post("/logout", &[]).await?;
    assert!(to_sign_in(&response));
    assert!(browser.cookie.is_none(), "sign-out clears the cookie");
    // The old token is dead too, not just forgotten by this browser.
    browser.cookie = Some(format!("{SESSION_COOKIE}={token}"));
    assert!(to_sign_in(&browser.get("/").await?));
    Ok(())
}

#[tokio::test]
async fn an_unknown_login_and_a_wrong_password_get_the_same_answer() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let (_, login) = app.account_with_owner("Network").await?;
    let mut browser = Browser::new(&app);

    let wrong = browser.sign_in(&login, "not the password at all").await?;
    let (wrong_status, wrong_body) = (wrong.status(), wrong.text().await?);
    let unknown = browser.sign_in("nobody@test.local", PASSWORD).await?;
    let (unknown_status, unknown_body) = (unknown.status(), unknown.text().await?);

    assert_eq!(wrong_status, StatusCode::UNAUTHORIZED);
    assert_eq!(unknown_status, StatusCode::UNAUTHORIZED);
    // The page echoes the login typed; apart from that, the two answers are identical.
    assert_eq!(
        wrong_body.replace(&login, "LOGIN"),
        unknown_body.replace("nobody@test.local", "LOGIN")
    );
    assert!(wrong_body.contains("do not match"), "{wrong_body}");
    // Input PostgreSQL cannot store is just another wrong login, never a 500.
    let hostile = browser.sign_in("nul\u{0}@test.local", PASSWORD).await?;
    assert_eq!(hostile.status(), StatusCode::UNAUTHORIZED);
    assert!(browser.cookie.is_none());
    Ok(())
}

#[tokio::test]
async fn sign_in_attempts_are_limited_per_login() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let (_, login) = app.account_with_owner("Network").await?;
    let mut browser = Browser::new(&app);
    for attempt in 0..10 {
        let response = browser.sign_in(&login, "wrong password here").await?;
        assert_eq!(
            response.status(),
            StatusCode::UNAUTHORIZED,
            "attempt {attempt}"
        );
    }
    // The eleventh is refused before the password is even looked at: the right one too.
    let response = browser.sign_in(&login, PASSWORD).await?;
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    let wait: u64 = response.headers()["retry-after"].to_str()?.parse()?;
    assert!((1..=60).contains(&wait), "{wait}");
    assert!(response.text().await?.contains("Too many attempts"));
    assert!(browser.cookie.is_none());
    Ok(())
}

#[tokio::test]
async fn sign_in_attempts_are_limited_per_client_address() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let mut browser = Browser::new(&app);
    for attempt in 0..30 {
        let login = format!("nobody-{attempt}@test.local");
        let response = browser.sign_in(&login, PASSWORD).await?;
        assert_eq!(
            response.status(),
            StatusCode::UNAUTHORIZED,
            "attempt {attempt}"
        );
    }
    let response = browser.sign_in("nobody-31@test.local", PASSWORD).await?;
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(response.headers().contains_key("retry-after"));
    Ok(())
}

#[tokio::test]
async fn a_token_from_before_sign_in_is_not_the_one_after() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let (_, login) = app.account_with_owner("Network").await?;

    // An attacker signs in and plants their own valid token in the victim's browser...
    let attacker = Browser::signed_in(&app, &login, PASSWORD).await?;
    let planted = attacker.cookie.clone();
    let mut victim = Browser::new(&app);
    victim.cookie = planted.clone();

    // ...the victim signs in: a new token, and the planted one is ended.
    let response = victim.sign_in(&login, PASSWORD).await?;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    assert!(victim.cookie.is_some());
    assert_ne!(victim.cookie, planted);
    victim.page("/", StatusCode::OK).await?;
    let mut replay = Browser::new(&app);
    replay.cookie = planted;
    assert!(to_sign_in(&replay.get("/").await?));

    // A made-up token is not adopted either.
    let mut browser = Browser::new(&app);
    let chosen = format!("{SESSION_COOKIE}=wdn_session_{}", "ab".repeat(32));
    browser.cookie = Some(chosen.clone());
    assert!(to_sign_in(&browser.get("/").await?));
    browser.cookie = Some(chosen.clone());
    browser.sign_in(&login, PASSWORD).await?;
    assert_ne!(browser.cookie.as_deref(), Some(chosen.as_str()));
    Ok(())
}

#[tokio::test]
async fn a_cross_origin_post_is_refused() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let (_, login) = app.account_with_owner("Network").await?;
    let mut browser = Browser::signed_in(&app, &login, PASSWORD).await?;

    let evil = Some("https://evil.example");
    let response = browser.post_from("/logout", &[], evil).await?;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert!(response.text().await?.contains("Request refused"));
    // Without Origin or Sec-Fetch-Site, no change either.
    let response = browser.post_from("/logout", &[], None).await?;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let invite = [("login", "x@test.local"), ("role", "viewer")];
    let response = browser.post_from("/team/invites", &invite, evil).await?;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    // Sign-in itself (login CSRF) too.
    let form = [("login", login.as_str()), ("password", PASSWORD)];
    let response = Browser::new(&app).post_from("/login", &form, evil).await?;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);

    // Nothing happened: the session lives and no invite was made.
    browser.page("/", StatusCode::OK).await?;
    let invites: i64 = sqlx::query_scalar("SELECT count(*) FROM team_invites")
        .fetch_one(&app.db.pool)
        .await?;
    assert_eq!(invites, 0);
    Ok(())
}
