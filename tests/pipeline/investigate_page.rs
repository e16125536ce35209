//! The Investigate page (`/players/{uuid}`) in a real browser: `tests/browser/investigate_page.mjs`
//! signs in as a moderator on a stack fed through ingest, sees every section of one player
//! filled (names over time, rank history, linked account, playtime, sessions, punishments with
//! a revoke, flags by check, alts with a banned one marked) but no chat (not one line in the
//! page's source, `?chat_at=` ignored), finds a hostile name shown as text, and watches the
//! Overview's live feed mark a join from a banned player's IP; then an admin sees the chat with
//! its hostile line as text and jumps it to a time; every page is scanned with axe-core, and a
//! viewer gets 403.

use crate::browser::{require_browser_tooling, run_browser_script, workspace_root};
use crate::dashboard::{Network, ago, now, post_as};
use pipeline_tests::MEMBER_PASSWORD;
use serde_json::{Value, json};

const SERVER: &str = "1b000000-0000-4000-8000-000000000001";
const STAFF: &str = "1b000000-0000-4000-8000-0000000000a1";
const SUSPECT: &str = "1b000000-0000-4000-8000-0000000000a2";
const BANNED: &str = "1b000000-0000-4000-8000-0000000000a3";
const NEWCOMER: &str = "1b000000-0000-4000-8000-0000000000a4";
/// A player of another account, from the same IP: never shown to this account.
const OUTSIDER: &str = "1b000000-0000-4000-8000-0000000000b1";
const HOME_IP: &str = "203.0.113.50";
/// The suspect's newer name: markup that must show as text.
const HOSTILE_NAME: &str = "<img id=\"pwned-name\" src=x>";
const HOSTILE_LINE: &str = "<script>window.__xss=1</script><img id=\"pwned-chat\" src=x>";

fn session(player: &str, name: &str, event: &str, at: String) -> Value {
    json!({"server_id": SERVER, "player_uuid": player, "player_name": name, "event": event,
           "ip": HOME_IP, "at": at})
}

fn chat(message: &str, at: String) -> Value {
    json!({"server_id": SERVER, "player_uuid": SUSPECT, "entry_type": "chat",
           "message": message, "channel": "global", "sent_at": at})
}

fn flag(check: &str, vl: f64, at: String) -> Value {
    json!({"server_id": SERVER, "player_uuid": SUSPECT, "check_name": check, "check_type": "A",
           "violation_level": vl, "source_plugin": "grim", "flagged_at": at})
}

/// One player with something in every section, a banned alt, and a moderator and a viewer.
async fn seed(net: &Network) {
    let now = now();
    // A long sync interval: the server stays online (and the suspect with it) for the run.
    net.settings(&["Moderator"], 600).await;
    net.post(
        "/api/plugin/heartbeat",
        json!({"server_id": SERVER, "name": "Lobby", "tps": 20, "player_count": 2,
               "max_players": 50}),
    )
    .await;
    let rank = |player: &str, group: &str, previous: Option<&str>, at: i64| {
        json!({"player_uuid": player, "action": "set", "group": group, "previous_group": previous,
               "staff_uuid": STAFF, "staff_name": "Mia", "changed_at": ago(now, at)})
    };
    net.post(
        "/api/plugin/rank-changes",
        json!([
            rank(SUSPECT, "Member", None, 9500),
            rank(SUSPECT, "VIP", Some("Member"), 3600),
        ]),
    )
    .await;
    net.post(
        "/api/plugin/account-links",
        json!({"player_uuid": SUSPECT, "platform": "discord", "external_id": "4242",
               "external_name": "sus_on_discord", "action": "link", "at": ago(now, 9000)}),
    )
    .await;
    net.post(
        "/api/plugin/sessions",
        json!([
            session(SUSPECT, "Suspect", "join", ago(now, 9000)),
            session(SUSPECT, "Suspect", "quit", ago(now, 8000)),
            session(BANNED, "Banny", "join", ago(now, 7500)),
            session(BANNED, "Banny", "quit", ago(now, 7400)),
            session(SUSPECT, HOSTILE_NAME, "join", ago(now, 120)),
        ]),
    )
    .await;
    let punish = |player: &str, kind: &str, reason: &str, at: i64, id: &str| {
        json!({"server_id": SERVER, "player_uuid": player, "type": kind, "reason": reason,
               "staff_uuid": STAFF, "staff_name": "Mia", "issued_at": ago(now, at),
               "source_plugin": "litebans", "external_id": id})
    };
    net.post(
        "/api/plugin/punishments",
        json!([
            punish(BANNED, "ban", "ban evasion", 7000, "b1"),
            punish(SUSPECT, "mute", "spam", 6000, "m1"),
            punish(SUSPECT, "warning", "language", 3000, "w1"),
        ]),
    )
    .await;
    net.post(
        "/api/plugin/punishments",
        json!({"server_id": SERVER, "player_uuid": SUSPECT, "type": "mute", "action": "revoke",
               "source_plugin": "litebans", "external_id": "m1", "staff_uuid": STAFF,
               "staff_name": "Mia", "issued_at": ago(now, 5500), "revoke_reason": "appealed"}),
    )
    .await;
    net.post(
        "/api/plugin/anticheat-flags",
        json!([
            flag("Reach", 4.5, ago(now, 90_000)),
            flag("Reach", 6.0, ago(now, 200)),
            flag("Reach", 7.5, ago(now, 100)),
            flag("Fly", 2.0, ago(now, 150)),
        ]),
    )
    .await;
    net.post(
        "/api/plugin/chat",
        json!([
            chat("hello from the past", ago(now, 8500)),
            chat(HOSTILE_LINE, ago(now, 3500)),
            chat("the latest line", ago(now, 60)),
        ]),
    )
    .await;
    net.stack
        .projected()
        .await
        .expect("the seeded network is projected");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_moderator_investigates_a_player_without_chat_and_an_admin_sees_it_in_a_real_browser() {
    let root = workspace_root();
    require_browser_tooling(&root);
    let net = Network::start("Investigate Network").await;
    let other = net.other_account("Investigate Elsewhere").await;
    post_as(
        &net.stack,
        &other,
        "/api/plugin/sessions",
        json!(session(OUTSIDER, "Outsider", "join", ago(now(), 7000))),
    )
    .await;
    seed(&net).await;
    let alts = net
        .wait_for(&format!("/api/players/{SUSPECT}/alts"), |b| {
            b["items"][0]["is_banned"] == true
        })
        .await;
    assert_eq!(alts["items"][0]["uuid"], BANNED, "{alts}");
    let moderator = "moderator@investigate.test";
    let admin = "admin@investigate.test";
    let viewer = "viewer@investigate.test";
    net.stack
        .create_members(
            &net.account.id,
            &[
                (moderator, "Max Moderator", "moderator"),
                (admin, "Ada Admin", "admin"),
                (viewer, "Vic Viewer", "viewer"),
            ],
        )
        .await
        .expect("the members");
    // The chat moment to jump to: a minute after the oldest line, as a datetime-local field
    // takes it (UTC, to the minute).
    let jump = (now() - chrono::Duration::seconds(8500 - 60))
        .format("%Y-%m-%dT%H:%M")
        .to_string();

    run_browser_script(
        &root,
        "investigate_page.mjs",
        &[
            ("BASE_URL", &net.stack.base),
            ("MODERATOR_LOGIN", moderator),
            ("ADMIN_LOGIN", admin),
            ("VIEWER_LOGIN", viewer),
            ("PASSWORD", MEMBER_PASSWORD),
            ("PLUGIN_KEY", &net.account.plugin_key),
            ("SERVER_ID", SERVER),
            ("SUSPECT", SUSPECT),
            ("BANNED", BANNED),
            ("NEWCOMER", NEWCOMER),
            ("OUTSIDER", OUTSIDER),
            ("HOME_IP", HOME_IP),
            ("HOSTILE_NAME", HOSTILE_NAME),
            ("HOSTILE_LINE", HOSTILE_LINE),
            ("CHAT_AT", &jump),
        ],
    )
    .await;
}
