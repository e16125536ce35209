//! The appeals inbox end to end: players' appeals (appended to the event log as the public
//! appeal form does) are listed by status with counts for moderators; viewers are refused and
//! see no "Appeals" link; another account's appeal is not found. Taking up, denying and
//! accepting write `appeal` steps; accepting a ban in force revokes it (the punishments API and
//! the servers' action feed show the revoke), within the role's limits; a decided appeal stays
//! decided; each decision is audited.

use crate::dashboard::{Network, ago, items, now};
use crate::member::Member;
use chrono::Utc;
use pipeline_tests::TestStack;
use reqwest::Method;
use serde_json::{Value, json};
use shared::envelope::{LogMessage, Logged};
use shared::privacy::{PrivacyConfig, PrivacyPolicy};
use shared::publisher::Publisher;
use shared::records::{Appeal, AppealStep};
use std::time::Duration;
use uuid::Uuid;

const SERVER: &str = "a99ea100-0000-4000-8000-000000000001";
const PLAYER: &str = "a99ea100-0000-4000-8000-0000000000a1";

/// Appends a player's appeal of `punishment` to the account's event log, sealed and under the
/// message id the public form uses; returns the appeal's id.
pub(crate) async fn submit(
    stack: &TestStack,
    account: &str,
    punishment: Uuid,
    player: Uuid,
    message: &str,
) -> Uuid {
    let account: Uuid = account.parse().expect("an account id");
    let client = async_nats::connect(stack.nats.url()).await.expect("nats");
    let js = async_nats::jetstream::new(client.clone());
    let keyring = PrivacyConfig::from_vars(&stack.vars)
        .expect("privacy settings")
        .keyring(&js, &stack.event_log)
        .await
        .expect("the privacy buckets");
    let subjects = shared::nats::open_event_stream(&js, &stack.event_log)
        .await
        .expect("the event stream")
        .subjects;
    let id = Uuid::now_v7();
    let at = Utc::now();
    let appeal = Appeal {
        id,
        step: AppealStep::Submitted,
        punishment_id: punishment,
        player_uuid: player,
        message: Some(message.to_owned()),
        reply: None,
        by: None,
        revoke_action: None,
        at,
    };
    appeal.validate(at).expect("a valid appeal");
    let batch = Appeal::into_batch(vec![Logged {
        id: Uuid::now_v7(),
        record: appeal,
    }]);
    let mut message = LogMessage::new(account, at, batch);
    keyring
        .seal(&mut message, &PrivacyPolicy::default())
        .await
        .expect("sealed");
    let publisher = Publisher::new(
        client,
        stack.event_log.stream.clone(),
        Duration::from_secs(5),
        "test_appeal_publish_seconds",
    );
    publisher
        .append(
            subjects.for_records(account, Appeal::KIND, None),
            Some(format!("appeal_submitted:{account}:{id}")),
            message.encode(),
        )
        .await
        .expect("the appeal is appended");
    id
}

/// The player's punishments as the API lists them.
async fn punishments(net: &Network) -> Vec<Value> {
    let (status, page) = net.get(&format!("/api/players/{PLAYER}/punishments")).await;
    assert_eq!(status, 200, "{page}");
    items(&page)
}

/// The id of the player's punishment given for `reason`.
async fn punishment_id(net: &Network, reason: &str) -> Uuid {
    let found = punishments(net).await;
    let item = found
        .iter()
        .find(|p| p["reason"] == reason)
        .unwrap_or_else(|| panic!("no punishment for {reason}: {found:?}"));
    item["id"].as_str().expect("an id").parse().expect("a uuid")
}

/// The appeal's stored status and revoke action.
async fn stored(net: &Network, id: Uuid) -> (String, Option<Uuid>) {
    sqlx::query_as("SELECT status, revoke_action FROM appeals WHERE id = $1")
        .bind(id)
        .fetch_one(&net.stack.db.pool)
        .await
        .expect("the appeal row")
}

fn decision<'a>(step: &'a str, reply: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![("step", step), ("reply", reply), ("action_id", "")]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn moderators_decide_appeals_and_an_accepted_one_lifts_the_ban() {
    let net = Network::start("Appeals Inbox Network").await;
    let now = now();
    net.post(
        "/api/plugin/sessions",
        json!({"server_id": SERVER, "player_uuid": PLAYER, "player_name": "Appealer",
               "event": "join", "at": ago(now, 600)}),
    )
    .await;
    let ban = |reason: &str, issued: i64, expires: Option<i64>, external: &str| {
        json!({"server_id": SERVER, "player_uuid": PLAYER, "player_name": "Appealer",
               "type": "ban", "reason": reason, "staff_name": "ModMike",
               "issued_at": ago(now, issued), "expires_at": expires.map(|e| ago(now, e)),
               "scope": "global", "source_plugin": "litebans", "external_id": external})
    };
    net.post(
        "/api/plugin/punishments",
        json!([
            ban("week one", 500, Some(-7 * 86_400), "1"),
            ban("week two", 400, Some(-7 * 86_400), "2"),
            ban("for good", 300, None, "3"),
            ban("long over", 7200, Some(3600), "4"),
        ]),
    )
    .await;
    net.stack.projected().await.expect("projected");
    let player: Uuid = PLAYER.parse().expect("uuid");
    let week_one = punishment_id(&net, "week one").await;
    let week_two = punishment_id(&net, "week two").await;
    let for_good = punishment_id(&net, "for good").await;
    let long_over = punishment_id(&net, "long over").await;
    let account = net.account.id.clone();
    let accepted = submit(
        &net.stack,
        &account,
        week_one,
        player,
        "I was lagging, not flying.\nHere is my clip.",
    )
    .await;
    let denied = submit(
        &net.stack,
        &account,
        week_two,
        player,
        "Please let me back, I <b>promise</b>.",
    )
    .await;
    let beyond = submit(
        &net.stack,
        &account,
        for_good,
        player,
        "It was my brother on my account.",
    )
    .await;
    let ended = submit(
        &net.stack,
        &account,
        long_over,
        player,
        "Please clear my record of this ban.",
    )
    .await;
    net.stack.projected().await.expect("projected");

    for (login, name, role) in [
        ("mod@appeals.test", "Mia Moderator", "moderator"),
        ("viewer@appeals.test", "Vic Viewer", "viewer"),
        ("admin@appeals.test", "Ada Admin", "admin"),
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
    let admin = Member::sign_in(&net.stack.base, "admin@appeals.test").await;
    let stranger = Member::sign_in(&net.stack.base, "mod@other-appeals.test").await;

    // The inbox: new appeals, newest first, with each status's count and the nav's badge.
    let (status, page) = moderator.page("/appeals").await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(page.matches(r#"data-testid="appeal-row""#).count(), 4);
    assert!(
        page.contains(r#"New <span data-testid="count">(4)</span>"#),
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
    let newest = page.find(&ended.to_string()).expect("the newest listed");
    let oldest = page.find(&accepted.to_string()).expect("the oldest listed");
    assert!(newest < oldest, "newest first");
    let badge = moderator.page("/appeals/badge").await;
    assert_eq!(badge.0, 200);
    assert!(badge.1.contains(">4<"), "{}", badge.1);
    let (status, page) = moderator.page("/appeals?status=denied").await;
    assert_eq!(status, 200);
    assert!(page.contains(r#"id="inbox-empty""#), "no denied appeal yet");
    let (status, _) = moderator.page("/appeals?status=open").await;
    assert_eq!(status, 422, "an unknown status");

    // A viewer: no link, the usual 403; another account: not found.
    let (status, home) = viewer.page("/").await;
    assert_eq!(status, 200);
    assert!(
        !home.contains(r#"href="/appeals""#),
        "a viewer's bar has no Appeals"
    );
    for path in [
        "/appeals".to_owned(),
        format!("/appeals/{accepted}"),
        "/appeals/badge".to_owned(),
    ] {
        let (status, _) = viewer.page(&path).await;
        assert_eq!(status, 403, "a viewer opens {path}");
    }
    let path = format!("/appeals/{accepted}/decision");
    let (status, _, _) = viewer
        .post_form(&path, &decision("accepted", ""), None)
        .await;
    assert_eq!(status, 403, "a viewer decides nothing");
    let (status, _) = stranger.page(&format!("/appeals/{accepted}")).await;
    assert_eq!(status, 404, "another account's appeal");
    let (status, _, _) = stranger
        .post_form(&path, &decision("accepted", ""), None)
        .await;
    assert_eq!(status, 404, "another account's appeal is not decided");
    let (_, page) = stranger.page("/appeals").await;
    assert_eq!(page.matches(r#"data-testid="appeal-row""#).count(), 0);
    let (status, _, _) = moderator
        .post_form(
            &path,
            &decision("accepted", ""),
            Some("https://evil.example"),
        )
        .await;
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
    assert_eq!(
        stored(&net, accepted).await,
        ("new".into(), None),
        "nothing written"
    );

    // The detail page: the appeal, the punishment, the history, notes and the form.
    let (status, page) = moderator.page(&format!("/appeals/{accepted}")).await;
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

    // Take up, then deny: the ban stays.
    let path = format!("/appeals/{denied}/decision");
    let (status, location, body) = moderator
        .post_form(&path, &decision("under_review", ""), None)
        .await;
    assert_eq!(status, 303, "{body}");
    assert_eq!(
        location.as_deref(),
        Some(format!("/appeals/{denied}").as_str())
    );
    assert_eq!(stored(&net, denied).await.0, "under_review");
    let (_, page) = moderator.page("/appeals?status=under_review").await;
    assert!(page.contains(&denied.to_string()));
    assert!(page.contains(r#"New <span data-testid="count">(3)</span>"#));
    assert!(page.contains(r#"Under review <span data-testid="count">(1)</span>"#));
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
    let (status, feed) = net
        .stack
        .call(
            Method::GET,
            "/api/plugin/actions?after=0&wait=0",
            &net.account.plugin_key,
            None,
        )
        .await;
    assert_eq!(status, 200, "{feed}");
    let revokes: Vec<&Value> = feed["actions"]
        .as_array()
        .expect("actions")
        .iter()
        .filter(|a| a["type"] == "revoke")
        .collect();
    assert_eq!(revokes.len(), 1, "{feed}");
    assert_eq!(revokes[0]["id"], revoke.to_string());
    assert_eq!(revokes[0]["revoke"]["punishment_id"], week_one.to_string());
    let (_, page) = moderator.page(&format!("/appeals/{accepted}")).await;
    assert!(page.contains(r#"data-appeal-status="accepted""#) && page.contains(reply));
    let (status, _, _) = moderator
        .post_form(&path, &decision("accepted", reply), None)
        .await;
    assert_eq!(status, 409, "the same form again decides nothing more");

    // An appeal of a ban already over: accepted, nothing to revoke.
    let path = format!("/appeals/{ended}/decision");
    let (status, _, body) = moderator
        .post_form(&path, &decision("accepted", ""), None)
        .await;
    assert_eq!(status, 303, "{body}");
    assert_eq!(stored(&net, ended).await, ("accepted".into(), None));

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_acceptance_the_log_did_not_confirm_is_one_revoke_and_one_step_when_sent_again() {
    let net = Network::start("Appeals Frozen Log").await;
    let now = now();
    net.post(
        "/api/plugin/sessions",
        json!({"server_id": SERVER, "player_uuid": PLAYER, "player_name": "Appealer",
               "event": "join", "at": ago(now, 600)}),
    )
    .await;
    let ban = |reason: &str, external: &str| {
        json!({"server_id": SERVER, "player_uuid": PLAYER, "player_name": "Appealer",
               "type": "ban", "reason": reason, "staff_name": "ModMike",
               "issued_at": ago(now, 500), "expires_at": ago(now, -86_400),
               "scope": "global", "source_plugin": "litebans", "external_id": external})
    };
    net.post(
        "/api/plugin/punishments",
        json!([ban("first", "1"), ban("second", "2")]),
    )
    .await;
    net.stack.projected().await.expect("projected");
    let player: Uuid = PLAYER.parse().expect("uuid");
    let account = net.account.id.clone();
    let first = punishment_id(&net, "first").await;
    let second = punishment_id(&net, "second").await;
    let appeal = submit(
        &net.stack,
        &account,
        first,
        player,
        "Please lift the first ban.",
    )
    .await;
    let other = submit(
        &net.stack,
        &account,
        second,
        player,
        "Please lift the second ban.",
    )
    .await;
    net.stack.projected().await.expect("projected");
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
    let path = format!("/appeals/{other}/decision");
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
    let path = format!("/appeals/{appeal}/decision");
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
    assert_eq!(
        stored(&net, appeal).await,
        ("accepted".into(), Some(action))
    );
    let (status, feed) = net
        .stack
        .call(
            Method::GET,
            "/api/plugin/actions?after=0&wait=0",
            &net.account.plugin_key,
            None,
        )
        .await;
    assert_eq!(status, 200, "{feed}");
    let revokes: Vec<&Value> = feed["actions"]
        .as_array()
        .expect("actions")
        .iter()
        .filter(|a| a["type"] == "revoke")
        .collect();
    assert_eq!(revokes.len(), 1, "one revoke: {feed}");
    assert_eq!(revokes[0]["id"], action_id);
    let lifted = punishments(&net)
        .await
        .into_iter()
        .find(|p| p["reason"] == "first")
        .expect("the ban");
    assert_eq!(lifted["is_active"], false);
}
