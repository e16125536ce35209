//! Erasing a player through the admin API and the dashboard: who may, what the
//! request does before it answers (the key destroyed, the erasure logged, the audit row), and
//! its answer while the projector is behind (no projector runs here: the tests write the
//! `erased_players` row the projector would). The whole pipeline (scrubbed read models, pages,
//! export, SSE backfill and rebuild) is tested in `tests/pipeline/privacy/erasure.rs`.

use crate::browser::{Browser, PASSWORD};
use crate::dashboard_pages::member;
use crate::helpers::{TestApp, problem, text};
use crate::read_models::{Dashboard, ago, now, player};
use async_nats::jetstream;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use shared::envelope::{LogMessage, Logged, RecordBatch};
use shared::privacy::{ERASED, PrivacyPolicy};
use shared::records::{Note, NoteAuthor, RecordKind};
use uuid::Uuid;

/// The event log's stream, created as the projector would (query-api only appends to it).
async fn event_log(app: &TestApp) -> anyhow::Result<jetstream::stream::Stream> {
    let client = async_nats::connect(&app.nats_url).await?;
    let js = jetstream::new(client);
    let config = app.config.common.event_log.stream_config();
    Ok(js.get_or_create_stream(config).await?)
}

/// Every erasure record in the stream, as (account, player, by).
async fn logged_erasures(app: &TestApp) -> anyhow::Result<Vec<(Uuid, Uuid, String)>> {
    let mut stream = event_log(app).await?;
    let last = stream.info().await?.state.last_sequence;
    let mut found = Vec::new();
    for sequence in 1..=last {
        let raw = stream.get_raw_message(sequence).await?;
        let message = LogMessage::decode(&raw.payload)?;
        if let RecordBatch::Erasure(records) = message.batch {
            assert!(raw.subject.ends_with(".erasure"), "{}", raw.subject);
            for r in records {
                found.push((message.account_id, r.record.player_uuid, r.record.by));
            }
        }
    }
    Ok(found)
}

/// A note about `player`, sealed as query-api seals it (with the player's key).
async fn sealed_note(app: &TestApp, account: Uuid, player: Uuid) -> anyhow::Result<LogMessage> {
    let client = async_nats::connect(&app.nats_url).await?;
    let keyring = app
        .config
        .privacy
        .keyring(&jetstream::new(client), &app.config.common.event_log)
        .await?;
    let note = Note {
        player_uuid: player,
        punishment_id: None,
        text: "private remark".into(),
        evidence: vec![],
        author: NoteAuthor {
            member_id: Uuid::new_v4(),
            name: "Mia".into(),
        },
        written_at: now(),
    };
    let mut message = LogMessage::new(
        account,
        now(),
        Note::into_batch(vec![Logged {
            id: Uuid::now_v7(),
            record: note,
        }]),
    );
    keyring
        .seal(&mut message, &PrivacyPolicy::default())
        .await?;
    Ok(message)
}

/// The note's text as a new process (a fresh keyring, nothing cached) reads it.
async fn opened_text(app: &TestApp, message: &LogMessage) -> anyhow::Result<String> {
    let client = async_nats::connect(&app.nats_url).await?;
    let keyring = app
        .config
        .privacy
        .keyring(&jetstream::new(client), &app.config.common.event_log)
        .await?;
    let mut messages = [message.clone()];
    keyring.open(&mut messages).await?;
    let [opened] = messages;
    match opened.batch {
        RecordBatch::Note(notes) => Ok(notes[0].record.text.clone()),
        other => anyhow::bail!("not a note: {:?}", other.kind()),
    }
}

/// What the projector writes once it applied an erasure.
async fn applied(app: &TestApp, account: Uuid, player: Uuid) -> anyhow::Result<()> {
    sqlx::query(
        "INSERT INTO erased_players (account_id, player_uuid, erased_at, erased_by, seq) \
         VALUES ($1, $2, now(), 'admin', 1) ON CONFLICT DO NOTHING",
    )
    .bind(account)
    .bind(player)
    .execute(&app.db.pool)
    .await?;
    sqlx::query(
        "UPDATE players SET username = NULL, names = '{}' WHERE account_id = $1 AND uuid = $2",
    )
    .bind(account)
    .bind(player)
    .execute(&app.db.pool)
    .await?;
    Ok(())
}

async fn audit(
    app: &TestApp,
    account: Uuid,
) -> anyhow::Result<Vec<(String, Option<String>, Value)>> {
    Ok(sqlx::query_as(
        "SELECT actor, target, detail FROM audit_log \
         WHERE account_id = $1 AND action = 'player_erased' ORDER BY at",
    )
    .bind(account)
    .fetch_all(&app.db.pool)
    .await?)
}

#[tokio::test]
async fn the_admin_route_needs_the_admin_key_a_known_account_and_its_player() -> anyhow::Result<()>
{
    let dash = Dashboard::start().await?;
    let t = now();
    let ada = player(dash.pool(), dash.account, "Ada", t, t).await?;
    let path = format!("/api/admin/accounts/{}/players/{ada}/erase", dash.account);
    let response = dash.app.client.post(dash.app.url(&path)).send().await?;
    problem(response, StatusCode::UNAUTHORIZED, "missing_credentials").await?;
    let response = dash
        .app
        .client
        .post(dash.app.url(&path))
        .bearer_auth(&dash.key)
        .send()
        .await?;
    problem(response, StatusCode::FORBIDDEN, "wrong_key_type").await?;

    let other = dash.app.create_account("Other").await?;
    for refused in [
        // A player this account never saw.
        format!(
            "/api/admin/accounts/{}/players/{}/erase",
            dash.account,
            Uuid::new_v4()
        ),
        // No such account.
        format!("/api/admin/accounts/{}/players/{ada}/erase", Uuid::new_v4()),
        // Ada is this account's player, not the other account's.
        format!("/api/admin/accounts/{other}/players/{ada}/erase"),
        format!(
            "/api/admin/accounts/{}/players/not-a-uuid/erase",
            dash.account
        ),
    ] {
        let response = dash.app.admin(Method::POST, &refused).send().await?;
        problem(response, StatusCode::NOT_FOUND, "not_found").await?;
    }
    // Nothing refused was logged or audited.
    event_log(&dash.app).await?;
    assert_eq!(logged_erasures(&dash.app).await?, []);
    assert_eq!(audit(&dash.app, dash.account).await?, []);
    Ok(())
}

#[tokio::test]
async fn an_erasure_destroys_the_key_logs_the_record_and_says_pending_until_applied()
-> anyhow::Result<()> {
    let dash = Dashboard::start().await?;
    event_log(&dash.app).await?;
    let t = now();
    let ada = player(dash.pool(), dash.account, "Ada", ago(t, 60), t).await?;
    let bob = player(dash.pool(), dash.account, "Bob", ago(t, 60), t).await?;
    let adas_note = sealed_note(&dash.app, dash.account, ada).await?;
    let bobs_note = sealed_note(&dash.app, dash.account, bob).await?;
    assert_eq!(opened_text(&dash.app, &adas_note).await?, "private remark");

    let path = format!("/api/admin/accounts/{}/players/{ada}/erase", dash.account);
    let started = std::time::Instant::now();
    let response = dash.app.admin(Method::POST, &path).send().await?;
    // No projector here: the request waited its 5 s for one, then answered "pending".
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    assert!(started.elapsed() >= std::time::Duration::from_secs(5));
    let body: Value = response.json().await?;
    assert_eq!(body["status"], "pending", "{body}");
    assert_eq!(text(&body["player_uuid"]), ada.to_string());
    assert_eq!(body["erased_at"], Value::Null);

    // The key is gone for every process: Ada's sealed note reads as erased, Bob's does not.
    assert_eq!(opened_text(&dash.app, &adas_note).await?, ERASED);
    assert_eq!(opened_text(&dash.app, &bobs_note).await?, "private remark");
    assert_eq!(
        logged_erasures(&dash.app).await?,
        [(dash.account, ada, "admin".to_owned())]
    );
    let rows = audit(&dash.app, dash.account).await?;
    assert_eq!(rows.len(), 1, "{rows:?}");
    let (actor, target, detail) = &rows[0];
    assert_eq!(actor, "admin key");
    assert_eq!(target.as_deref(), Some(ada.to_string().as_str()));
    assert_eq!(detail["via"], "admin_api");
    assert_eq!(detail["status"], "pending");
    assert!(!detail.to_string().contains("Ada"), "{detail}");

    // Once the projector applied it, asking again answers at once; twice is fine.
    applied(&dash.app, dash.account, ada).await?;
    let response = dash.app.admin(Method::POST, &path).send().await?;
    assert_eq!(response.status(), StatusCode::OK);
    let body: Value = response.json().await?;
    assert_eq!(body["status"], "erased", "{body}");
    assert!(body["erased_at"].is_string(), "{body}");
    assert_eq!(logged_erasures(&dash.app).await?.len(), 2);
    assert_eq!(RecordKind::Erasure.as_str(), "erasure");
    Ok(())
}

#[tokio::test]
async fn only_owners_and_admins_erase_from_the_page_after_a_confirm_step() -> anyhow::Result<()> {
    let dash = Dashboard::start().await?;
    event_log(&dash.app).await?;
    let t = now();
    let ada = player(dash.pool(), dash.account, "Ada", ago(t, 60), t).await?;
    let page = format!("/players/{ada}");
    let erase = format!("/players/{ada}/erase");
    let link = format!("href=\"/players/{ada}/erase\"");

    for role in ["moderator", "viewer"] {
        let mut someone = member(&dash, role).await?;
        someone.page(&erase, StatusCode::FORBIDDEN).await?;
        let refused = someone.post(&erase, &[("confirm", "yes")]).await?;
        assert_eq!(refused.status(), StatusCode::FORBIDDEN, "{role}");
    }
    let mut moderator = member(&dash, "moderator").await?;
    let html = moderator.page(&page, StatusCode::OK).await?;
    assert!(!html.contains(&link), "a moderator is offered the erasure");

    let mut owner = member(&dash, "owner").await?;
    let html = owner.page(&page, StatusCode::OK).await?;
    assert!(html.contains(&link), "no erase link for an owner: {html}");
    let confirm = owner.page(&erase, StatusCode::OK).await?;
    assert!(confirm.contains("Erase Ada"), "{confirm}");
    assert!(confirm.contains("name=\"confirm\""), "{confirm}");
    // Without the box ticked nothing happens; from another site neither.
    let unconfirmed = owner.post(&erase, &[("confirm", "")]).await?;
    assert_eq!(unconfirmed.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let forged = owner
        .post_from(&erase, &[("confirm", "yes")], Some("https://evil.example"))
        .await?;
    assert_eq!(forged.status(), StatusCode::FORBIDDEN);
    owner
        .page(
            &format!("/players/{}/erase", Uuid::new_v4()),
            StatusCode::NOT_FOUND,
        )
        .await?;
    owner
        .page("/players/nobody/erase", StatusCode::BAD_REQUEST)
        .await?;
    assert_eq!(logged_erasures(&dash.app).await?, []);
    assert_eq!(audit(&dash.app, dash.account).await?, []);

    // An owner of another account cannot reach Ada.
    let (_, login) = dash.app.account_with_owner("Other").await?;
    let mut stranger = Browser::signed_in(&dash.app, &login, PASSWORD).await?;
    let response = stranger.post(&erase, &[("confirm", "yes")]).await?;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);

    // The projector is simulated as done, so the action answers at once, back to the page.
    applied(&dash.app, dash.account, ada).await?;
    let done = owner.post(&erase, &[("confirm", "yes")]).await?;
    assert_eq!(done.status(), StatusCode::SEE_OTHER);
    assert_eq!(
        done.headers().get("location").and_then(|v| v.to_str().ok()),
        Some(page.as_str())
    );
    let html = owner.page(&page, StatusCode::OK).await?;
    assert!(html.contains("erased player"), "{html}");
    assert!(html.contains("data-testid=\"erased-player\""), "{html}");
    assert!(
        !html.contains(&link),
        "an erased player offers erasure again"
    );
    let logged = logged_erasures(&dash.app).await?;
    assert_eq!(logged.len(), 1, "{logged:?}");
    assert_ne!(
        logged[0].2, "admin",
        "the member's id is the record's author"
    );
    let rows = audit(&dash.app, dash.account).await?;
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert!(rows[0].0.starts_with("owner-"), "{rows:?}");
    assert_eq!(rows[0].2["via"], json!("dashboard"));
    Ok(())
}
