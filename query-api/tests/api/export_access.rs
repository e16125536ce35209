//! Who may export a player's data, the audit trail it leaves, and the streaming of a large
//! export.

use crate::dashboard_pages::member;
use crate::export::{column, export};
use crate::helpers::{eventually, problem, text};
use crate::read_models::{Dashboard, ago, now, player, server};
use reqwest::StatusCode;
use serde_json::Value;
use std::time::Duration;
use uuid::Uuid;

#[tokio::test]
async fn the_admin_route_needs_the_admin_key_and_a_known_player() -> anyhow::Result<()> {
    let dash = Dashboard::start().await?;
    let t = now();
    let ada = player(dash.pool(), dash.account, "Ada", t, t).await?;
    let path = format!("/api/admin/accounts/{}/players/{ada}/export", dash.account);
    let response = dash.app.get_with(&path, None).await?;
    problem(response, StatusCode::UNAUTHORIZED, "missing_credentials").await?;
    let response = dash.app.get_with(&path, Some(&dash.key)).await?;
    problem(response, StatusCode::FORBIDDEN, "wrong_key_type").await?;

    let stranger = Uuid::new_v4();
    let unknown = format!(
        "/api/admin/accounts/{}/players/{stranger}/export",
        dash.account
    );
    let response = dash
        .app
        .admin(reqwest::Method::GET, &unknown)
        .send()
        .await?;
    problem(response, StatusCode::NOT_FOUND, "not_found").await?;
    let no_account = format!(
        "/api/admin/accounts/{}/players/{ada}/export",
        Uuid::new_v4()
    );
    let response = dash
        .app
        .admin(reqwest::Method::GET, &no_account)
        .send()
        .await?;
    problem(response, StatusCode::NOT_FOUND, "not_found").await?;
    // Ada is this account's player, not the other account's.
    let other = dash.app.create_account("Other").await?;
    let theirs = format!("/api/admin/accounts/{other}/players/{ada}/export");
    let response = dash.app.admin(reqwest::Method::GET, &theirs).send().await?;
    problem(response, StatusCode::NOT_FOUND, "not_found").await?;
    let malformed = format!(
        "/api/admin/accounts/{}/players/not-a-uuid/export",
        dash.account
    );
    let response = dash
        .app
        .admin(reqwest::Method::GET, &malformed)
        .send()
        .await?;
    problem(response, StatusCode::NOT_FOUND, "not_found").await?;

    // Only the export that was served is on record, with no personal data.
    let (status, _, _, _) = export(&dash, dash.account, ada).await?;
    assert_eq!(status, StatusCode::OK);
    let audit: Vec<(String, String, Option<String>, Value)> = sqlx::query_as(
        "SELECT actor, action, target, detail FROM audit_log \
         WHERE account_id = $1 AND action = 'player_exported'",
    )
    .bind(dash.account)
    .fetch_all(dash.pool())
    .await?;
    assert_eq!(audit.len(), 1, "{audit:?}");
    let (actor, _, target, detail) = &audit[0];
    assert_eq!(actor, "admin key");
    assert_eq!(target.as_deref(), Some(ada.to_string().as_str()));
    assert_eq!(detail, &serde_json::json!({"via": "admin_api"}));
    Ok(())
}

#[tokio::test]
async fn the_page_refuses_a_moderator_and_serves_an_owner() -> anyhow::Result<()> {
    let dash = Dashboard::start().await?;
    let t = now();
    let ada = player(dash.pool(), dash.account, "Ada", ago(t, 60), t).await?;
    let path = format!("/players/{ada}/export");
    let link = format!("href=\"/players/{ada}/export\"");

    let mut moderator = member(&dash, "moderator").await?;
    moderator.page(&path, StatusCode::FORBIDDEN).await?;
    let page = moderator
        .page(&format!("/players/{ada}"), StatusCode::OK)
        .await?;
    assert!(!page.contains(&link), "a moderator is offered the export");

    let mut owner = member(&dash, "owner").await?;
    let page = owner
        .page(&format!("/players/{ada}"), StatusCode::OK)
        .await?;
    assert!(page.contains(&link), "no export link for an owner: {page}");
    let response = owner.get(&path).await?;
    assert_eq!(response.status(), StatusCode::OK);
    let disposition = response.headers().get("content-disposition").cloned();
    assert_eq!(
        disposition.and_then(|v| v.to_str().ok().map(str::to_owned)),
        Some(format!("attachment; filename=\"player-{ada}.json\""))
    );
    let doc: Value = serde_json::from_slice(&response.bytes().await?)?;
    assert_eq!(column(&doc, "player", "username"), ["Ada"]);
    owner
        .page(
            &format!("/players/{}/export", Uuid::new_v4()),
            StatusCode::NOT_FOUND,
        )
        .await?;
    owner
        .page("/players/nobody/export", StatusCode::BAD_REQUEST)
        .await?;

    let actors: Vec<(String, Value)> = sqlx::query_as(
        "SELECT actor, detail FROM audit_log WHERE account_id = $1 AND action = 'player_exported'",
    )
    .bind(dash.account)
    .fetch_all(dash.pool())
    .await?;
    assert_eq!(actors.len(), 1, "{actors:?}");
    assert!(actors[0].0.starts_with("owner-"), "{actors:?}");
    assert_eq!(actors[0].1, serde_json::json!({"via": "dashboard"}));
    Ok(())
}

#[tokio::test]
async fn a_large_export_is_streamed_and_whole() -> anyhow::Result<()> {
    const LINES: i64 = 20_000;
    let dash = Dashboard::start().await?;
    let t = now();
    let ada = player(dash.pool(), dash.account, "Ada", ago(t, 86_400), t).await?;
    let lobby = server(dash.pool(), dash.account, Some("Lobby"), true, t).await?;
    sqlx::query(
        "INSERT INTO chat_messages (account_id, id, player_uuid, server_id, entry_type, message, \
           channel, sent_at) \
         SELECT $1, gen_random_uuid(), $2, $3, 'chat', 'line ' || n || ' ' || repeat('x', 100), \
           'global', $4 + make_interval(secs => n) \
         FROM generate_series(1, $5) AS n",
    )
    .bind(dash.account)
    .bind(ada)
    .bind(lobby)
    .bind(ago(t, 86_400))
    .bind(LINES)
    .execute(dash.pool())
    .await?;

    let path = format!("/api/admin/accounts/{}/players/{ada}/export", dash.account);
    let response = dash.app.admin(reqwest::Method::GET, &path).send().await?;
    assert_eq!(response.status(), StatusCode::OK);
    // Streamed: no length known up front, sent in chunks.
    assert!(response.headers().get("content-length").is_none());
    let encoding = response.headers().get("transfer-encoding").map(text_of);
    assert_eq!(encoding.as_deref(), Some("chunked"));
    let mut body = Vec::new();
    let mut pieces = 0;
    let mut response = response;
    while let Some(piece) = response.chunk().await? {
        body.extend_from_slice(&piece);
        pieces += 1;
    }
    assert!(pieces > 1, "the body came in one piece");
    let doc: Value = serde_json::from_slice(&body)?;
    let messages = column(&doc, "chat", "message");
    assert_eq!(messages.len(), usize::try_from(LINES)?);
    assert!(messages[0].starts_with("line 1 "), "{}", messages[0]);
    assert!(messages[messages.len() - 1].starts_with(&format!("line {LINES} ")));
    let sent: Vec<String> = column(&doc, "chat", "sent_at");
    assert!(sent.windows(2).all(|w| w[0] < w[1]), "not oldest first");
    assert_eq!(text(&doc["player_uuid"]), ada.to_string());
    Ok(())
}

fn text_of(value: &reqwest::header::HeaderValue) -> String {
    value.to_str().unwrap_or_default().to_owned()
}

/// Connections of the test database inside an export's transaction (the app's other queries
/// run outside transactions).
async fn exports_reading(pool: &sqlx::PgPool) -> anyhow::Result<i64> {
    Ok(sqlx::query_scalar(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
         AND pid <> pg_backend_pid() AND xact_start IS NOT NULL AND query LIKE '%player_uuid%'",
    )
    .fetch_one(pool)
    .await?)
}

#[tokio::test]
async fn an_abandoned_download_gives_its_connection_back() -> anyhow::Result<()> {
    let dash = Dashboard::start().await?;
    let t = now();
    let ada = player(dash.pool(), dash.account, "Ada", ago(t, 86_400), t).await?;
    let lobby = server(dash.pool(), dash.account, Some("Lobby"), true, t).await?;
    // About 40 MB of chat: far more than the socket buffers and the pieces in flight hold.
    sqlx::query(
        "INSERT INTO chat_messages (account_id, id, player_uuid, server_id, entry_type, message, \
           channel, sent_at) \
         SELECT $1, gen_random_uuid(), $2, $3, 'chat', repeat('y', 4000), 'global', \
           $4 + make_interval(secs => n) \
         FROM generate_series(1, 10000) AS n",
    )
    .bind(dash.account)
    .bind(ada)
    .bind(lobby)
    .bind(ago(t, 86_400))
    .execute(dash.pool())
    .await?;
    let path = format!("/api/admin/accounts/{}/players/{ada}/export", dash.account);
    let mut response = dash.app.admin(reqwest::Method::GET, &path).send().await?;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.chunk().await?.is_some());
    // The client reads no further: the export waits, mid-read, in its snapshot.
    let waiting = eventually(Duration::from_secs(5), || async {
        exports_reading(dash.pool()).await.is_ok_and(|n| n == 1)
    })
    .await;
    assert!(waiting, "no export is waiting on the client");
    drop(response);
    let released = eventually(Duration::from_secs(10), || async {
        exports_reading(dash.pool()).await.is_ok_and(|n| n == 0)
    })
    .await;
    assert!(released, "the abandoned export still holds its connection");
    Ok(())
}
