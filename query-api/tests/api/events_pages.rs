//! The Events and Funnels pages under a member's session: the server-rendered list and its
//! filters, the htmx partials, the funnel form, the session's live stream ending with the
//! session, and the dashboard quota counted per member.

use crate::browser::{Browser, PASSWORD, to_sign_in};
use crate::helpers::TestApp;
use chrono::{Duration, Utc};
use reqwest::StatusCode;
use sqlx::PgPool;
use uuid::Uuid;

/// Inserts an event as the projector would have stored it (seq and time in order).
async fn event(pool: &PgPool, account: &str, seq: i64, name: &str, player: Uuid, properties: &str) {
    let at = Utc::now() - Duration::seconds(600 - seq / 1000);
    sqlx::query(
        "INSERT INTO events (account_id, id, seq, name, is_internal, player_uuid, properties, \
         occurred_at, received_at) VALUES ($1::uuid, $2, $3, $4, false, $5, $6::json, $7, $7)",
    )
    .bind(account)
    .bind(Uuid::now_v7())
    .bind(seq)
    .bind(name)
    .bind(player)
    .bind(properties)
    .bind(at)
    .execute(pool)
    .await
    .expect("an event");
}

/// An account with a viewer signed in, and two players' quest events (2 started, 1 completed).
async fn viewer_with_events(app: &TestApp) -> anyhow::Result<Browser> {
    let (account, _) = app.account_with_owner("Events").await?;
    app.create_member(&account, "vera@events.test", "Vera", "viewer")
        .await?;
    let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
    event(&app.db.pool, &account, 1000, "quest_started", a, "{}").await;
    event(&app.db.pool, &account, 2000, "quest_started", b, "{}").await;
    let probe = r#"{"html":"<img src=x onerror=alert(1)>"}"#;
    event(&app.db.pool, &account, 3000, "quest_completed", a, probe).await;
    Browser::signed_in(app, "vera@events.test", PASSWORD).await
}

#[tokio::test]
async fn the_events_page_lists_filters_and_escapes_without_a_key() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    assert!(to_sign_in(&Browser::new(&app).get("/events").await?));
    let mut viewer = viewer_with_events(&app).await?;

    let page = viewer.page("/events", StatusCode::OK).await?;
    assert_eq!(page.matches(r#"data-testid="event-row""#).count(), 3);
    // Live from the newest event shown, with the same filters.
    assert!(page.contains(r#"data-stream="/events/stream?""#), "{page}");
    assert!(page.contains(r#"data-after="3000""#), "{page}");
    assert!(!page.contains("<img src=x"), "event data is escaped");
    assert!(page.contains("&#60;img src=x"), "{page}");

    let filtered = viewer
        .page("/events?names=quest_completed", StatusCode::OK)
        .await?;
    assert_eq!(filtered.matches(r#"data-testid="event-row""#).count(), 1);
    assert!(
        filtered.contains(r#"value="quest_completed""#),
        "the form keeps the filter"
    );

    let refused = viewer
        .page(
            "/events?names=Not+A+Name&player=x",
            StatusCode::UNPROCESSABLE_ENTITY,
        )
        .await?;
    assert!(refused.contains("Event names:") && refused.contains("Player UUID:"));
    assert!(
        !refused.contains("data-stream="),
        "no live feed for filters that cannot be used"
    );

    // The htmx partial says which page address it is.
    let feed = viewer.get("/events/feed?names=quest_started").await?;
    assert_eq!(feed.status(), StatusCode::OK);
    assert_eq!(feed.headers()["hx-push-url"], "/events?names=quest_started");
    let feed = feed.text().await?;
    assert!(feed.starts_with("<section id=\"feed\"") || feed.contains("<section id=\"feed\""));
    assert!(!feed.contains("<html"), "a partial, not a page");
    Ok(())
}

#[tokio::test]
async fn the_funnel_form_computes_on_the_server_and_only_from_this_origin() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let mut viewer = viewer_with_events(&app).await?;
    let builder = viewer
        .page("/funnels?step=quest_started", StatusCode::OK)
        .await?;
    assert!(
        builder.contains(r#"id="funnel-step-1" name="step" type="text" value="quest_started""#)
    );
    assert_eq!(builder.matches(r#"name="step""#).count(), 2);

    let form = [
        ("step", "quest_started"),
        ("step", "quest_completed"),
        ("window", "2"),
        ("window_unit", "86400"),
        ("order", "strict"),
    ];
    let added = viewer
        .post("/funnels", &[&form[..], &[("action", "add")]].concat())
        .await?;
    assert_eq!(added.status(), StatusCode::OK);
    assert_eq!(added.text().await?.matches(r#"name="step""#).count(), 3);

    let result = viewer
        .post("/funnels", &[&form[..], &[("action", "run")]].concat())
        .await?;
    assert_eq!(result.status(), StatusCode::OK);
    let result = result.text().await?;
    assert!(
        result.contains(r#"data-name="quest_started" data-players="2""#),
        "{result}"
    );
    assert!(
        result.contains(r#"data-name="quest_completed" data-players="1""#),
        "{result}"
    );
    assert!(result.contains("50% of start"), "{result}");
    assert!(
        result.contains(r#"<option value="strict" selected>"#),
        "the form keeps the order"
    );

    let invalid = viewer
        .post("/funnels", &[("step", "session_join"), ("step", "x")])
        .await?;
    assert_eq!(invalid.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(invalid.text().await?.contains("Step 1:"));

    let elsewhere = viewer
        .post_from("/funnels", &form, Some("https://evil.example"))
        .await?;
    assert_eq!(elsewhere.status(), StatusCode::FORBIDDEN);
    Ok(())
}

#[tokio::test]
async fn the_session_stream_ends_with_the_session() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let mut viewer = viewer_with_events(&app).await?;
    let bad = viewer.get("/events/stream?names=Bad").await?;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let mut stream = viewer.get("/events/stream?after=1000").await?;
    assert_eq!(stream.status(), StatusCode::OK);
    assert_eq!(stream.headers()["content-type"], "text/event-stream");

    let mut other = Browser::new(&app);
    other.cookie = viewer.cookie.clone();
    let signed_out = other.post("/logout", &[]).await?;
    assert!(to_sign_in(&signed_out));
    let mut seen = String::new();
    let ended = tokio::time::timeout(std::time::Duration::from_secs(5), async {
        while let Ok(Some(chunk)) = stream.chunk().await {
            seen.push_str(&String::from_utf8_lossy(&chunk));
            if seen.contains("event: revoked") {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(
        ended,
        Ok(true),
        "the stream did not end with the session: {seen}"
    );
    assert!(seen.contains("session_ended"), "{seen}");
    assert!(to_sign_in(&viewer.get("/events/stream").await?));
    Ok(())
}

#[tokio::test]
async fn a_members_event_reads_count_against_the_dashboard_quota() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let mut viewer = viewer_with_events(&app).await?;
    for n in 0..60 {
        let response = viewer.get("/events/feed").await?;
        assert_eq!(response.status(), StatusCode::OK, "read {n}");
    }
    let refused = viewer.get("/events/rows").await?;
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(refused.headers().contains_key("retry-after"));
    // Pages that read no events are not counted.
    viewer.page("/funnels", StatusCode::OK).await?;
    Ok(())
}
