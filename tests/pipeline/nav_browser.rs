//! The dashboard's header in a real browser: `tests/browser/nav_search.mjs` measures the header
//! at 1440 px (one row) and 390 px (a menu over the page), uses the player search by keyboard
//! ("/", typing, arrows, Enter) to open a player found by a past name, and scans with axe-core.

use crate::browser::{require_browser_tooling, run_browser_script, workspace_root};
use crate::dashboard::{Network, ago, now};
use pipeline_tests::MEMBER_PASSWORD;
use serde_json::json;

const SERVER: &str = "5f000000-0000-4000-8000-000000000001";
/// Renamed from OldGrumpyMiner to ShinyNewName.
const RENAMED: &str = "5f000000-0000-4000-8000-0000000000a1";
const OTHER: &str = "5f000000-0000-4000-8000-0000000000a2";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_header_fits_a_wide_screen_and_a_phone_and_finds_a_player_by_keyboard() {
    let root = workspace_root();
    require_browser_tooling(&root);
    let net = Network::start("Header Browser Network").await;
    let now = now();
    net.post(
        "/api/plugin/heartbeat",
        json!({"server_id": SERVER, "name": "Lobby", "tps": 20, "player_count": 2,
               "max_players": 50}),
    )
    .await;
    let session = |player: &str, name: &str, event: &str, at: String| {
        json!({"server_id": SERVER, "player_uuid": player, "player_name": name,
               "event": event, "at": at})
    };
    net.post(
        "/api/plugin/sessions",
        json!([
            session(RENAMED, "OldGrumpyMiner", "join", ago(now, 9000)),
            session(RENAMED, "OldGrumpyMiner", "quit", ago(now, 8000)),
            session(RENAMED, "ShinyNewName", "join", ago(now, 300)),
            session(OTHER, "Wanderer", "join", ago(now, 200)),
        ]),
    )
    .await;
    net.stack
        .projected()
        .await
        .expect("the network is projected");
    let owner = "owner@header.test";
    net.stack
        .create_member(&net.account.id, owner, "Olive Owner", "owner")
        .await
        .expect("the owner");
    run_browser_script(
        &root,
        "nav_search.mjs",
        &[
            ("BASE_URL", &net.stack.base),
            ("OWNER_LOGIN", owner),
            ("PASSWORD", MEMBER_PASSWORD),
            ("RENAMED", RENAMED),
        ],
    )
    .await;
}
