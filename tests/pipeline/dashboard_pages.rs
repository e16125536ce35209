//! The whole staff dashboard in a real browser: `tests/browser/dashboard.mjs` signs in with a
//! real member on a stack fed through ingest, visits every page of the navigation bar, checks
//! each shows this network's data, watches the Overview's activity feed update live, checks a
//! viewer's bar and a 403, sign-out, the session cookie, and scans every page with axe-core.

use crate::browser::{require_browser_tooling, run_browser_script, workspace_root};
use crate::dashboard::{Network, ago, now};
use pipeline_tests::MEMBER_PASSWORD;
use serde_json::json;

const SERVER: &str = "7d000000-0000-4000-8000-000000000001";
const STAFF: &str = "7d000000-0000-4000-8000-0000000000a1";
const PLAYER: &str = "7d000000-0000-4000-8000-0000000000a2";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_dashboard_page_shows_the_network_to_a_signed_in_member_in_a_real_browser() {
    let root = workspace_root();
    require_browser_tooling(&root);
    let net = Network::start("Browser Network").await;
    net.settings(&["Moderator", "Helper"], 30).await;
    let now = now();
    net.post(
        "/api/plugin/heartbeat",
        json!({"server_id": SERVER, "name": "Lobby", "tps": 19.5, "player_count": 2,
               "max_players": 50, "version": "1.21.4"}),
    )
    .await;
    net.post(
        "/api/plugin/rank-changes",
        json!([{"player_uuid": STAFF, "player_name": "Mia", "action": "set",
                "group": "Moderator", "changed_at": ago(now, 120)}]),
    )
    .await;
    for (player, name) in [(STAFF, "Mia"), (PLAYER, "Griefer")] {
        net.post(
            "/api/plugin/sessions",
            json!({"server_id": SERVER, "player_uuid": player, "player_name": name,
                   "event": "join", "at": ago(now, 60)}),
        )
        .await;
    }
    net.post(
        "/api/plugin/punishments",
        json!([{"server_id": SERVER, "player_uuid": PLAYER, "player_name": "Griefer",
                "type": "warning", "reason": "spam", "staff_uuid": STAFF, "staff_name": "Mia",
                "issued_at": ago(now, 30)}]),
    )
    .await;
    let events = json!([
        {"player_uuid": PLAYER, "name": "quest_started", "properties": {"quest": "tutorial"}},
        {"player_uuid": PLAYER, "name": "quest_completed", "properties": {"quest": "tutorial"}},
    ]);
    net.post("/api/v1/plugin/events", events).await;
    net.stack
        .projected()
        .await
        .expect("the seeded network is projected");
    let owner = "owner@dashboard.test";
    let viewer = "viewer@dashboard.test";
    net.stack
        .create_members(
            &net.account.id,
            &[
                (owner, "Olive Owner", "owner"),
                (viewer, "Vic Viewer", "viewer"),
            ],
        )
        .await
        .expect("the members");

    run_browser_script(
        &root,
        "dashboard.mjs",
        &[
            ("BASE_URL", &net.stack.base),
            ("OWNER_LOGIN", owner),
            ("VIEWER_LOGIN", viewer),
            ("PASSWORD", MEMBER_PASSWORD),
            ("PLUGIN_KEY", &net.account.plugin_key),
            ("SERVER_ID", SERVER),
        ],
    )
    .await;
}
