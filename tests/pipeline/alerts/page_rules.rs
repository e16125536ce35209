//! The Alerts page finishes a rule's life: an admin edits it (the form filled from the rule;
//! a refused change keeps what was typed), pauses it (a ban then notifies no one, checked
//! once the notifier has evaluated past it) and resumes it (the next ban is delivered: first
//! refused by the receiver, then accepted); the delivery's page lists both attempts, newest
//! first. Every change is in the audit log as the API's PUT writes it. A moderator may do
//! none of it.

use super::{AlertRig, punishment};
use crate::member::Member;
use reqwest::Method;
use serde_json::json;
use test_support::ReceiverMode;

const ADMIN: &str = "admin@rules-page.test";
const MODERATOR: &str = "moderator@rules-page.test";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_admin_edits_pauses_and_resumes_a_rule_and_reads_a_delivery_s_attempts()
-> anyhow::Result<()> {
    let mut rig = AlertRig::start(|vars| vars).await?;
    let (destination, _) = rig.webhook_destination().await?;
    let rule = rig.punishment_rule(&destination, &["ban"]).await?;
    rig.stack
        .create_members(
            &rig.account.id,
            &[
                (ADMIN, "Ada Admin", "admin"),
                (MODERATOR, "Max Moderator", "moderator"),
            ],
        )
        .await?;
    let base = rig.stack.base.clone();
    let admin = Member::sign_in(&base, ADMIN).await;
    let moderator = Member::sign_in(&base, MODERATOR).await;
    let edit = format!("/alerts/rules/{rule}/edit");
    let state = format!("/alerts/rules/{rule}/state");

    // A moderator may not open, save, pause or resume.
    assert_eq!(moderator.page(&edit).await.0, 403);
    let (status, _, _) = moderator
        .post_form(&state, &[("enabled", "false")], None)
        .await;
    assert_eq!(status, 403);
    let (status, _, _) = moderator
        .post_form(&edit, &[("kind", "punishment_issued")], None)
        .await;
    assert_eq!(status, 403);

    // The form is the rule's.
    let (status, page) = admin.page(&edit).await;
    assert_eq!(status, 200, "{page}");
    assert!(
        page.contains("<option value=\"punishment_issued\" selected>"),
        "{page}"
    );
    assert!(page.contains("value=\"Punishments\""), "{page}");
    assert!(page.contains("value=\"ban\" checked"), "{page}");
    assert!(!page.contains("value=\"mute\" checked"), "{page}");
    assert!(
        page.contains(&format!("value=\"{destination}\" checked")),
        "{page}"
    );

    // A refused change: the API's message, 422, and the form as typed.
    let (status, _, page) = admin
        .post_form(
            &edit,
            &[
                ("kind", "anticheat_threshold"),
                ("destinations", &destination),
                ("flags", "1"),
            ],
            None,
        )
        .await;
    assert_eq!(status, 422, "{page}");
    assert!(page.contains("id=\"rule-error\""), "{page}");
    assert!(page.contains("flags"), "{page}");
    assert!(
        page.contains("<option value=\"anticheat_threshold\" selected>"),
        "{page}"
    );

    let (status, location, body) = admin
        .post_form(
            &edit,
            &[
                ("kind", "punishment_issued"),
                ("name", "Bans only"),
                ("destinations", &destination),
                ("punishment_types", "ban"),
            ],
            None,
        )
        .await;
    assert_eq!(status, 303, "{body}");
    assert_eq!(location.as_deref(), Some("/alerts?notice=rule_changed"));
    let (_, stored) = rig
        .admin(Method::GET, &format!("/alert-rules/{rule}"), None)
        .await;
    assert_eq!(stored["name"], "Bans only", "{stored}");
    assert_eq!(stored["enabled"], true, "{stored}");

    // Paused: a ban notifies no one.
    let (status, location, _) = admin.post_form(&state, &[("enabled", "false")], None).await;
    assert_eq!(status, 303);
    assert_eq!(location.as_deref(), Some("/alerts?notice=rule_paused"));
    let (_, page) = admin.page("/alerts").await;
    assert!(page.contains("Resume rule Bans only"), "{page}");
    rig.post_punishments(json!([punishment("ban", "x-ray", "b-1")]))
        .await?;
    rig.evaluated().await?;
    assert!(rig.deliveries(&destination).await?.is_empty());

    // Resumed: the next ban is delivered, refused first, then accepted.
    rig.receiver.set_mode(ReceiverMode::Fail).await?;
    let (status, location, _) = admin.post_form(&state, &[("enabled", "true")], None).await;
    assert_eq!(status, 303);
    assert_eq!(location.as_deref(), Some("/alerts?notice=rule_resumed"));
    rig.post_punishments(json!([punishment("ban", "fly", "b-2")]))
        .await?;
    rig.wait_deliveries(&destination, "a refused attempt", |log| {
        log.len() == 1 && log[0]["last_status_code"] == 503
    })
    .await?;
    rig.receiver.set_mode(ReceiverMode::Ok).await?;
    let log = rig
        .wait_deliveries(&destination, "the ban delivered", |log| {
            log.len() == 1 && log[0]["status"] == "delivered"
        })
        .await?;
    let delivery = log[0]["id"].as_str().unwrap_or_default().to_owned();

    let attempts = format!("/alerts/destinations/{destination}/deliveries/{delivery}");
    let (status, page) = admin.page(&attempts).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("punishment.issued"), "{page}");
    let (ok, refused) = (page.find("HTTP 200"), page.find("HTTP 503"));
    assert!(
        matches!((ok, refused), (Some(ok), Some(refused)) if ok < refused),
        "the accepted attempt first, then the refused one: {page}"
    );
    let (_, log_page) = admin
        .page(&format!("/alerts/destinations/{destination}"))
        .await;
    assert!(log_page.contains(&attempts), "{log_page}");
    assert_eq!(moderator.page(&attempts).await.0, 403);

    // Each change is audited as the API's PUT audits it, with the member as the actor.
    let changes: Vec<(String, bool)> = sqlx::query_as(
        "SELECT actor, (detail->>'enabled')::boolean FROM audit_log \
         WHERE action = 'alert_rule_changed' AND target = $1 ORDER BY id",
    )
    .bind(&rule)
    .fetch_all(&rig.stack.db.pool)
    .await?;
    assert_eq!(changes.len(), 3, "{changes:?}");
    assert_eq!(
        changes.iter().map(|c| c.1).collect::<Vec<_>>(),
        [true, false, true]
    );
    assert!(changes.iter().all(|c| c.0 == ADMIN), "{changes:?}");
    Ok(())
}
