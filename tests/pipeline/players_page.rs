//! The Players page (`/players`) in a real browser: `tests/browser/players_page.mjs` signs in
//! as a moderator on a stack fed through ingest, sees who is online now and who was seen
//! recently, searches by a past name and follows the result to the player's page, finds a
//! hostile name shown as text, gets a message for a too-short search and an empty result for
//! a name nobody had, scans with axe-core, and checks a viewer gets 403.

use crate::browser::{require_browser_tooling, run_browser_script, workspace_root};
use crate::dashboard::{Network, ago, now, post_as};
use pipeline_tests::MEMBER_PASSWORD;
use serde_json::{Value, json};

const SERVER: &str = "9a000000-0000-4000-8000-000000000001";
/// Renamed from OldGrumpyMiner to ShinyNewName; online now.
const RENAMED: &str = "9a000000-0000-4000-8000-0000000000a1";
/// Left an hour ago: recently seen, not online.
const LEFT: &str = "9a000000-0000-4000-8000-0000000000a2";
const HOSTILE: &str = "9a000000-0000-4000-8000-0000000000a3";
/// A player of another account with the same old name: never shown here.
const OUTSIDER: &str = "9a000000-0000-4000-8000-0000000000b1";
/// A name that would run script if the page put it in as markup (ingest takes up to 64
/// characters of anything but NUL).
const HOSTILE_NAME: &str = "<img src=x id=pwned-player>\"'";

fn session(player: &str, name: &str, event: &str, at: String) -> Value {
    json!({"server_id": SERVER, "player_uuid": player, "player_name": name, "event": event,
           "at": at})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_moderator_finds_a_player_by_a_past_name_in_a_real_browser() {
    let root = workspace_root();
    require_browser_tooling(&root);
    let net = Network::start("Players Page Network").await;
    let other = net.other_account("Players Page Elsewhere").await;
    let now = now();
    // A long sync interval: the server stays online (and its players with it) for the run.
    net.settings(&["Moderator"], 600).await;
    net.post(
        "/api/plugin/heartbeat",
        json!({"server_id": SERVER, "name": "Lobby", "tps": 20, "player_count": 2,
               "max_players": 50}),
    )
    .await;
    net.post(
        "/api/plugin/sessions",
        json!([
            session(RENAMED, "OldGrumpyMiner", "join", ago(now, 9000)),
            session(RENAMED, "OldGrumpyMiner", "quit", ago(now, 8000)),
            session(LEFT, "Wanderer", "join", ago(now, 5000)),
            session(LEFT, "Wanderer", "quit", ago(now, 3600)),
            session(RENAMED, "ShinyNewName", "join", ago(now, 300)),
            session(HOSTILE, HOSTILE_NAME, "join", ago(now, 200)),
        ]),
    )
    .await;
    post_as(
        &net.stack,
        &other,
        "/api/plugin/sessions",
        json!(session(OUTSIDER, "OldGrumpyMiner", "join", ago(now, 100))),
    )
    .await;
    net.stack
        .projected()
        .await
        .expect("the network is projected");
    let moderator = "moderator@players.test";
    let viewer = "viewer@players.test";
    net.stack
        .create_members(
            &net.account.id,
            &[
                (moderator, "Max Moderator", "moderator"),
                (viewer, "Vic Viewer", "viewer"),
            ],
        )
        .await
        .expect("the members");

    run_browser_script(
        &root,
        "players_page.mjs",
        &[
            ("BASE_URL", &net.stack.base),
            ("MODERATOR_LOGIN", moderator),
            ("VIEWER_LOGIN", viewer),
            ("PASSWORD", MEMBER_PASSWORD),
            ("RENAMED", RENAMED),
            ("LEFT", LEFT),
            ("HOSTILE", HOSTILE),
            ("HOSTILE_NAME", HOSTILE_NAME),
            ("OUTSIDER", OUTSIDER),
        ],
    )
    .await;
}
