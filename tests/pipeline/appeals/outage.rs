//! An acceptance the event log did not confirm in time (503, "may or may not have been done"),
//! sent again as a browser would (the same form, its action id): one revoke, and the accepted
//! step names it.

use super::{appeal, banned, decision, feed_revokes, punishments, stored};
use crate::member::Member;
use std::time::Duration;
use uuid::Uuid;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_acceptance_the_log_did_not_confirm_is_one_revoke_and_one_step_when_sent_again() {
    let day = Some(-86_400);
    let (net, bans) = banned(
        "Appeals Frozen Log",
        &[("first", 500, day), ("second", 400, day)],
    )
    .await;
    let first = appeal(&net, bans[0], "Please lift the first ban.").await;
    let second = appeal(&net, bans[1], "Please lift the second ban.").await;
    net.stack
        .create_member(
            &net.account.id,
            "mod@frozen-appeals.test",
            "Mia Moderator",
            "moderator",
        )
        .await
        .expect("a member");
    let moderator = Member::sign_in(&net.stack.base, "mod@frozen-appeals.test").await;
    // A first step, so query-api holds the player's key (sealing needs no NATS below).
    let path = format!("/appeals/{second}/decision");
    let (status, _, body) = moderator
        .post_form(&path, &decision("under_review", ""), None)
        .await;
    assert_eq!(status, 303, "{body}");

    // NATS hangs: the revoke is sent and no ack comes in time.
    net.stack.nats.pause().expect("NATS pauses");
    let action_id = Uuid::now_v7().to_string();
    let form = [
        ("step", "accepted"),
        ("reply", "Welcome back."),
        ("action_id", action_id.as_str()),
    ];
    let path = format!("/appeals/{first}/decision");
    let (status, _, page) = moderator.post_form(&path, &form, None).await;
    net.stack.nats.resume().expect("NATS resumes");
    assert_eq!(status, 503, "{page}");
    assert!(page.contains("may or may not have been done"), "{page}");

    // The same form sent again: one revoke, and the step names it.
    let resent = pipeline_tests::eventually(Duration::from_secs(20), || async {
        let (status, _, _) = moderator.post_form(&path, &form, None).await;
        (status == 303).then_some(())
    })
    .await;
    assert!(
        resent.is_some(),
        "the form sent again is taken once NATS is back"
    );
    net.stack.projected().await.expect("projected");
    let action: Uuid = action_id.parse().expect("uuid");
    assert_eq!(stored(&net, first).await, ("accepted".into(), Some(action)));
    let revokes = feed_revokes(&net).await;
    assert_eq!(revokes.len(), 1, "one revoke: {revokes:?}");
    assert_eq!(revokes[0]["id"], action_id);
    let lifted = punishments(&net)
        .await
        .into_iter()
        .find(|p| p["reason"] == "first")
        .expect("the ban");
    assert_eq!(lifted["is_active"], false);
}
