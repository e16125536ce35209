//! Punishing from the dashboard end to end: a moderator bans a player on the Investigate page
//! (signed in, same-origin POST), query-api logs an `action`, the projector stores it as a
//! punishment (no server, the member as staff, source `warden`), the API, the pages and the
//! player's timeline show it; its revoke ends it. The roles table's limits hold (a viewer
//! cannot punish, a moderator cannot ban for good, an admin can), and bad input writes nothing.

use crate::dashboard::{Network, ago, items, now};
use crate::member::Member;
use serde_json::{Value, json};

const SERVER: &str = "7d000000-0000-4000-8000-00000000d001";
const PLAYER: &str = "7d000000-0000-4000-8000-00000000d0a2";

fn punish_path() -> String {
    format!("/players/{PLAYER}/punishments")
}

/// How many messages the event log holds.
async fn log_length(net: &Network) -> u64 {
    let client = async_nats::connect(net.stack.nats.url())
        .await
        .expect("nats");
    let mut stream = async_nats::jetstream::new(client)
        .get_stream(&net.stack.event_log.stream)
        .await
        .expect("the stream");
    stream.info().await.expect("stream info").state.messages
}

/// The player's punishments as the API lists them, newest first.
async fn punishments(net: &Network) -> Vec<Value> {
    let (status, page) = net.get(&format!("/api/players/{PLAYER}/punishments")).await;
    assert_eq!(status, 200, "{page}");
    items(&page)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_moderators_ban_from_the_dashboard_is_a_punishment_everywhere_and_its_revoke_ends_it() {
    let net = Network::start("Web Punish Network").await;
    net.post(
        "/api/plugin/sessions",
        json!({"server_id": SERVER, "player_uuid": PLAYER, "player_name": "Griefer",
               "event": "join", "at": ago(now(), 60)}),
    )
    .await;
    net.stack.projected().await.expect("projected");
    for (login, name, role) in [
        ("mod@punish.test", "Mia Moderator", "moderator"),
        ("viewer@punish.test", "Vic Viewer", "viewer"),
        ("admin@punish.test", "Ada Admin", "admin"),
    ] {
        net.stack
            .create_member(&net.account.id, login, name, role)
            .await
            .expect("a member");
    }
    let moderator = Member::sign_in(&net.stack.base, "mod@punish.test").await;
    let viewer = Member::sign_in(&net.stack.base, "viewer@punish.test").await;
    let admin = Member::sign_in(&net.stack.base, "admin@punish.test").await;

    // The Investigate page offers the form to a moderator, not to a viewer.
    let (status, page) = moderator.page(&format!("/players/{PLAYER}")).await;
    assert_eq!(status, 200);
    assert!(
        page.contains(r#"data-testid="punish-form""#),
        "the form is offered"
    );
    assert!(
        page.contains("up to 30 days"),
        "the moderator's limit is said"
    );
    let ban = [
        ("type", "ban"),
        ("length", "7d"),
        ("reason", "x-ray <b>mining</b>"),
        ("scope", "global"),
    ];

    // Refused, and nothing written: a viewer, another site, a moderator's permanent ban, bad input.
    let before = log_length(&net).await;
    let (status, _, _) = viewer.post_form(&punish_path(), &ban, None).await;
    assert_eq!(status, 403, "a viewer punishes nobody");
    let (status, _, _) = moderator
        .post_form(&punish_path(), &ban, Some("https://evil.example"))
        .await;
    assert_eq!(status, 403, "a cross-origin form punishes nobody");
    let forever = [
        ("type", "ban"),
        ("length", "permanent"),
        ("reason", "x"),
        ("scope", "global"),
    ];
    let (status, _, body) = moderator.post_form(&punish_path(), &forever, None).await;
    assert_eq!(status, 403, "{body}");
    assert!(
        body.contains("at most 30 days"),
        "the page says why: {body}"
    );
    for (bad, says) in [
        (
            vec![
                ("type", "ban"),
                ("length", "7d"),
                ("reason", "  "),
                ("scope", "global"),
            ],
            "say why",
        ),
        (
            vec![
                ("type", "jail"),
                ("length", "7d"),
                ("reason", "x"),
                ("scope", "global"),
            ],
            "choose a ban",
        ),
        (
            vec![
                ("type", "mute"),
                ("length", "8d"),
                ("reason", "x"),
                ("scope", "global"),
            ],
            "lengths offered",
        ),
        (
            vec![
                ("type", "mute"),
                ("length", "1d"),
                ("reason", "x"),
                ("scope", ""),
            ],
            "punishment.scope",
        ),
        (
            vec![("type", "kick"), ("reason", "a\0b"), ("scope", "global")],
            "NUL",
        ),
    ] {
        let (status, _, body) = moderator.post_form(&punish_path(), &bad, None).await;
        assert_eq!(status, 422, "{bad:?}: {body}");
        assert!(body.contains(says), "{bad:?} says {says:?}: {body}");
    }
    let stranger = "/players/7d000000-0000-4000-8000-00000000dead/punishments";
    let (status, _, _) = moderator.post_form(stranger, &ban, None).await;
    assert_eq!(status, 404, "a player the account never saw");
    assert_eq!(
        log_length(&net).await,
        before,
        "a refused action is not logged"
    );
    assert!(punishments(&net).await.is_empty());

    // The ban: logged, then shown like a plugin's punishment.
    let (status, location, body) = moderator.post_form(&punish_path(), &ban, None).await;
    assert_eq!(status, 303, "{body}");
    assert_eq!(
        location.as_deref(),
        Some(format!("/players/{PLAYER}#punish").as_str())
    );
    let listed = net
        .wait_for(&format!("/api/players/{PLAYER}/punishments"), |page| {
            !items(page).is_empty()
        })
        .await;
    let item = &items(&listed)[0];
    assert_eq!(item["type"], "ban");
    assert_eq!(item["reason"], "x-ray <b>mining</b>");
    assert_eq!(item["staff_username"], "Mia Moderator");
    assert_eq!(item["staff_uuid"], Value::Null);
    assert_eq!(item["server_id"], Value::Null);
    assert_eq!(item["source_plugin"], "warden");
    assert_eq!(item["scope"], "global");
    assert_eq!(item["is_active"], true);
    let id = item["id"].as_str().expect("an id").to_owned();
    let audited: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM audit_log WHERE action = 'punishment_issued' AND target = $1",
    )
    .bind(PLAYER)
    .fetch_one(&net.stack.db.pool)
    .await
    .expect("audit rows");
    assert_eq!(audited, 1);
    let (_, page) = moderator.page(&format!("/players/{PLAYER}")).await;
    assert!(
        page.contains("on the dashboard"),
        "the Investigate page says where"
    );
    assert!(
        page.contains("x-ray &#60;b&#62;mining&#60;/b&#62;") && !page.contains("<b>mining"),
        "the reason escaped"
    );
    assert!(
        page.contains(&format!("/punishments/{id}/revoke")),
        "a revoke form"
    );
    let (_, page) = moderator.page("/punishments").await;
    assert!(
        page.contains("Dashboard"),
        "the Punishments page says where"
    );
    assert!(
        page.contains(&format!(r#"action="/punishments/{id}/revoke""#)),
        "the Punishments page offers the revoke"
    );
    let timeline = net
        .wait_for(
            &format!("/api/v1/events?player_uuid={PLAYER}&internal=true&name=punish_ban"),
            |page| !items(page).is_empty(),
        )
        .await;
    assert_eq!(
        items(&timeline)[0]["properties"]["staff_name"],
        "Mia Moderator"
    );

    // An admin bans for good; the moderator may not lift that one, the admin may.
    let forever = [
        ("type", "ban"),
        ("length", "permanent"),
        ("reason", "alt"),
        ("scope", "global"),
    ];
    let (status, _, body) = admin.post_form(&punish_path(), &forever, None).await;
    assert_eq!(status, 303, "{body}");
    let listed = net
        .wait_for(&format!("/api/players/{PLAYER}/punishments"), |page| {
            items(page).len() == 2
        })
        .await;
    let permanent = items(&listed)
        .into_iter()
        .find(|p| p["expires_at"].is_null())
        .expect("the permanent ban");
    let permanent_id = permanent["id"].as_str().expect("an id").to_owned();
    let revoke = [("reason", "appeal accepted")];
    let (status, _, body) = moderator
        .post_form(
            &format!("/punishments/{permanent_id}/revoke"),
            &revoke,
            None,
        )
        .await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("only an admin can revoke this"), "{body}");

    // The moderator lifts their own week-long ban; a second revoke is refused.
    let (status, location, body) = moderator
        .post_form(&format!("/punishments/{id}/revoke"), &revoke, None)
        .await;
    assert_eq!(status, 303, "{body}");
    assert_eq!(
        location.as_deref(),
        Some(format!("/players/{PLAYER}#punish").as_str())
    );
    let listed = net
        .wait_for(&format!("/api/players/{PLAYER}/punishments"), |page| {
            items(page)
                .iter()
                .any(|p| p["id"] == id.as_str() && !p["revoked_at"].is_null())
        })
        .await;
    let ended = items(&listed)
        .into_iter()
        .find(|p| p["id"] == id.as_str())
        .expect("the ban");
    assert_eq!(ended["is_active"], false);
    assert_eq!(ended["revoked_by_username"], "Mia Moderator");
    assert_eq!(ended["revoke_reason"], "appeal accepted");
    let (status, _, body) = moderator
        .post_form(&format!("/punishments/{id}/revoke"), &revoke, None)
        .await;
    assert_eq!(status, 409, "{body}");
    let from_the_log = [("reason", "appeal accepted"), ("back", "punishments")];
    let (status, location, _) = admin
        .post_form(
            &format!("/punishments/{permanent_id}/revoke"),
            &from_the_log,
            None,
        )
        .await;
    assert_eq!(status, 303, "an admin lifts the permanent ban");
    assert_eq!(location.as_deref(), Some("/punishments"));
}
