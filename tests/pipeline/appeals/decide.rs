//! Deciding appeals: a denied appeal leaves the ban; accepting one revokes the ban as the
//! Punishments page's revoke does (the punishments API and the servers' action feed show it),
//! within the role's limits; a ban already over is accepted without a revoke; a decided appeal
//! stays decided; each decision is audited and on the audit page.

use super::{PLAYER, appeal, banned, decision, feed_revokes, punishments, stored};
use crate::dashboard::items;
use crate::member::Member;
use serde_json::Value;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deciding_denies_or_lifts_the_ban_within_the_roles_limits_and_only_once() {
    let week = Some(-7 * 86_400);
    let (net, bans) = banned(
        "Appeals Decisions Network",
        &[
            ("week one", 500, week),
            ("week two", 400, week),
            ("for good", 300, None),
            ("long over", 7200, Some(3600)),
        ],
    )
    .await;
    let accepted = appeal(&net, bans[0], "I was lagging, not flying.").await;
    let denied = appeal(&net, bans[1], "Please let me back, I promise.").await;
    let beyond = appeal(&net, bans[2], "It was my brother on my account.").await;
    let ended = appeal(&net, bans[3], "Please clear my record of this ban.").await;
    for (login, name, role) in [
        ("mod@decide.test", "Mia Moderator", "moderator"),
        ("admin@decide.test", "Ada Admin", "admin"),
    ] {
        net.stack
            .create_member(&net.account.id, login, name, role)
            .await
            .expect("a member");
    }
    let moderator = Member::sign_in(&net.stack.base, "mod@decide.test").await;
    let admin = Member::sign_in(&net.stack.base, "admin@decide.test").await;

    // Taken up, then denied: the ban stays, and the appeal cannot be decided again.
    let path = format!("/appeals/{denied}/decision");
    let (status, _, body) = moderator
        .post_form(&path, &decision("under_review", ""), None)
        .await;
    assert_eq!(status, 303, "{body}");
    let (status, _, body) = moderator
        .post_form(&path, &decision("denied", "The clip shows x-ray."), None)
        .await;
    assert_eq!(status, 303, "{body}");
    assert_eq!(stored(&net, denied).await, ("denied".into(), None));
    let ban_two = punishments(&net)
        .await
        .into_iter()
        .find(|p| p["reason"] == "week two")
        .expect("the ban");
    assert_eq!(ban_two["is_active"], true, "a denied appeal lifts nothing");
    let (status, _, body) = moderator
        .post_form(&path, &decision("accepted", ""), None)
        .await;
    assert_eq!(status, 409, "decided twice: {body}");

    // A moderator may not lift a permanent ban by accepting its appeal.
    let path = format!("/appeals/{beyond}/decision");
    let (status, _, body) = moderator
        .post_form(&path, &decision("accepted", ""), None)
        .await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("only an admin can revoke this"), "{body}");
    assert_eq!(stored(&net, beyond).await.0, "new");

    // Accepting lifts the ban: the appeal names the revoke, the API and the feed show it.
    let path = format!("/appeals/{accepted}/decision");
    let reply = "Fair enough, welcome back.";
    let (status, location, body) = moderator
        .post_form(&path, &decision("accepted", reply), None)
        .await;
    assert_eq!(status, 303, "{body}");
    assert_eq!(
        location.as_deref(),
        Some(format!("/appeals/{accepted}").as_str())
    );
    let (state, revoke) = stored(&net, accepted).await;
    assert_eq!(state, "accepted");
    let revoke = revoke.expect("the revoke action is named");
    let listed = net
        .wait_for(&format!("/api/players/{PLAYER}/punishments"), |page| {
            items(page)
                .iter()
                .any(|p| p["reason"] == "week one" && !p["revoked_at"].is_null())
        })
        .await;
    let lifted = items(&listed)
        .into_iter()
        .find(|p| p["reason"] == "week one")
        .expect("the ban");
    assert_eq!(lifted["is_active"], false);
    assert_eq!(lifted["revoked_by_username"], "Mia Moderator");
    assert_eq!(
        lifted["revoke_reason"],
        "Appeal accepted: Fair enough, welcome back."
    );
    let revokes = feed_revokes(&net).await;
    assert_eq!(revokes.len(), 1, "{revokes:?}");
    assert_eq!(revokes[0]["id"], revoke.to_string());
    assert_eq!(revokes[0]["revoke"]["punishment_id"], bans[0].to_string());
    let (_, page) = moderator.page(&format!("/appeals/{accepted}")).await;
    assert!(page.contains(r#"data-appeal-status="accepted""#) && page.contains(reply));
    assert!(!page.contains(r#"data-testid="decision-form""#), "decided");
    let (status, _, _) = moderator
        .post_form(&path, &decision("accepted", reply), None)
        .await;
    assert_eq!(status, 409, "the same decision again changes nothing");

    // An appeal of a ban already over: accepted, nothing to revoke.
    let path = format!("/appeals/{ended}/decision");
    let (status, _, body) = moderator
        .post_form(&path, &decision("accepted", ""), None)
        .await;
    assert_eq!(status, 303, "{body}");
    assert_eq!(stored(&net, ended).await, ("accepted".into(), None));
    assert_eq!(feed_revokes(&net).await.len(), 1, "no second revoke");

    // Each decision is audited, and the audit page shows it.
    let rows: Vec<(String, Value)> = sqlx::query_as(
        "SELECT target, detail FROM audit_log WHERE action = 'appeal_decided' ORDER BY id",
    )
    .fetch_all(&net.stack.db.pool)
    .await
    .expect("audit rows");
    let steps: Vec<(String, &str)> = rows
        .iter()
        .map(|(target, detail)| (target.clone(), detail["step"].as_str().unwrap_or("")))
        .collect();
    assert_eq!(
        steps,
        [
            (denied.to_string(), "under_review"),
            (denied.to_string(), "denied"),
            (accepted.to_string(), "accepted"),
            (ended.to_string(), "accepted"),
        ]
    );
    assert_eq!(rows[2].1["revoke_action"], revoke.to_string());
    let (status, page) = admin.page("/audit").await;
    assert_eq!(status, 200);
    assert!(
        page.contains("appeal_decided"),
        "the audit page lists decisions"
    );
}
