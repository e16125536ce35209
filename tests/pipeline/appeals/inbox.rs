//! The inbox lists an account's appeals by status, with counts, to moderators and up; viewers
//! get no link and a 403; another account's appeal is not found; bad input writes nothing; an
//! appeal's page shows it beside the punishment, the history and the notes; taking it up moves
//! it to "Under review".

use super::{PLAYER, appeal, banned, decision, stored};
use crate::member::Member;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_inbox_lists_appeals_by_status_for_moderators_only() {
    let week = Some(-7 * 86_400);
    let (net, bans) = banned(
        "Appeals Inbox Network",
        &[("week one", 500, week), ("week two", 400, week)],
    )
    .await;
    let first = appeal(
        &net,
        bans[0],
        "I was lagging, not flying.\nHere is my clip.",
    )
    .await;
    let second = appeal(&net, bans[1], "Please let me back, I <b>promise</b>.").await;
    for (login, name, role) in [
        ("mod@appeals.test", "Mia Moderator", "moderator"),
        ("viewer@appeals.test", "Vic Viewer", "viewer"),
    ] {
        net.stack
            .create_member(&net.account.id, login, name, role)
            .await
            .expect("a member");
    }
    let other = net.other_account("Other Appeals Network").await;
    net.stack
        .create_member(&other.id, "mod@other-appeals.test", "Oz Other", "moderator")
        .await
        .expect("a member");
    let moderator = Member::sign_in(&net.stack.base, "mod@appeals.test").await;
    let viewer = Member::sign_in(&net.stack.base, "viewer@appeals.test").await;
    let stranger = Member::sign_in(&net.stack.base, "mod@other-appeals.test").await;

    // New appeals, newest first, with each status's count and the nav's badge.
    let (status, page) = moderator.page("/appeals").await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(page.matches(r#"data-testid="appeal-row""#).count(), 2);
    assert!(
        page.contains(r#"New <span data-testid="count">(2)</span>"#),
        "{page}"
    );
    assert!(page.contains(r#"Accepted <span data-testid="count">(0)</span>"#));
    assert!(
        page.contains(r#"href="/appeals" aria-current="page">Appeals"#),
        "the nav links it"
    );
    assert!(
        page.contains(r#"hx-get="/appeals/badge""#),
        "the nav loads its badge"
    );
    assert!(page.contains("I was lagging, not flying.…") && !page.contains("Here is my clip"));
    assert!(
        page.contains("&#60;b&#62;promise") && !page.contains("<b>promise"),
        "escaped"
    );
    assert!(page.contains(&format!(r#"<a href="/players/{PLAYER}">Appealer</a>"#)));
    assert!(
        page.contains("week one") && page.contains("until"),
        "the punishment"
    );
    let newest = page.find(&second.to_string()).expect("the newest listed");
    let oldest = page.find(&first.to_string()).expect("the oldest listed");
    assert!(newest < oldest, "newest first");
    let (status, badge) = moderator.page("/appeals/badge").await;
    assert_eq!(status, 200);
    assert!(badge.contains(">2<"), "{badge}");
    let (status, page) = moderator.page("/appeals?status=denied").await;
    assert_eq!(status, 200);
    assert!(page.contains(r#"id="inbox-empty""#), "no denied appeal yet");
    let (status, _) = moderator.page("/appeals?status=open").await;
    assert_eq!(status, 422, "an unknown status");

    // A viewer: no link, the usual 403; another account: not found; bad input: nothing.
    let (status, home) = viewer.page("/").await;
    assert_eq!(status, 200);
    assert!(
        !home.contains(r#"href="/appeals""#),
        "a viewer's bar has no Appeals"
    );
    for path in [
        "/appeals".to_owned(),
        format!("/appeals/{first}"),
        "/appeals/badge".to_owned(),
    ] {
        let (status, _) = viewer.page(&path).await;
        assert_eq!(status, 403, "a viewer opens {path}");
    }
    let path = format!("/appeals/{first}/decision");
    let accept = decision("accepted", "");
    let (status, _, _) = viewer.post_form(&path, &accept, None).await;
    assert_eq!(status, 403, "a viewer decides nothing");
    let (status, _) = stranger.page(&format!("/appeals/{first}")).await;
    assert_eq!(status, 404, "another account's appeal");
    let (status, _, _) = stranger.post_form(&path, &accept, None).await;
    assert_eq!(status, 404, "another account's appeal is not decided");
    let (_, page) = stranger.page("/appeals").await;
    assert_eq!(page.matches(r#"data-testid="appeal-row""#).count(), 0);
    let evil = Some("https://evil.example");
    let (status, _, _) = moderator.post_form(&path, &accept, evil).await;
    assert_eq!(status, 403, "another site decides nothing");
    let (status, _, body) = moderator
        .post_form(&path, &decision("submitted", ""), None)
        .await;
    assert_eq!(status, 422, "{body}");
    let long = "x".repeat(2001);
    let (status, _, body) = moderator
        .post_form(&path, &decision("accepted", &long), None)
        .await;
    assert_eq!(status, 422, "{body}");
    let (status, _, body) = moderator
        .post_form(
            &path,
            &[("step", "accepted"), ("action_id", "not-a-uuid")],
            None,
        )
        .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(
        stored(&net, first).await,
        ("new".into(), None),
        "nothing written"
    );

    // The appeal's page: the appeal, the punishment, the history, notes and the form.
    let (status, page) = moderator.page(&format!("/appeals/{first}")).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains(r#"data-appeal-status="new""#));
    assert!(page.contains("Here is my clip"), "the whole message");
    assert!(page.contains("week one") && page.contains("ModMike") && page.contains("In force"));
    assert!(
        page.contains(r#"data-testid="history-row""#),
        "the other punishments"
    );
    assert!(page.contains(r#"data-testid="notes""#), "the notes section");
    assert!(page.contains(r#"name="action_id""#) && page.contains(r#"value="under_review""#));

    // Taken up: under review, and the counts follow.
    let path = format!("/appeals/{second}/decision");
    let (status, location, body) = moderator
        .post_form(&path, &decision("under_review", ""), None)
        .await;
    assert_eq!(status, 303, "{body}");
    assert_eq!(
        location.as_deref(),
        Some(format!("/appeals/{second}").as_str())
    );
    assert_eq!(stored(&net, second).await.0, "under_review");
    let (_, page) = moderator.page("/appeals?status=under_review").await;
    assert!(page.contains(&second.to_string()) && !page.contains(&first.to_string()));
    assert!(page.contains(r#"New <span data-testid="count">(1)</span>"#));
    assert!(page.contains(r#"Under review <span data-testid="count">(1)</span>"#));
    let (_, page) = moderator.page(&format!("/appeals/{second}")).await;
    assert!(page.contains(r#"data-appeal-status="under_review""#));
    assert!(!page.contains(r#"value="under_review""#), "taken up once");
}
