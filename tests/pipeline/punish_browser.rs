//! Punishing from the dashboard in a real browser: `tests/browser/punish_page.mjs` signs in as a
//! moderator, bans a player from the Investigate page's Punish form, finds the ban there and on
//! the Punishments page, is refused a permanent ban, and revokes the ban from its form; the
//! page is scanned with axe-core.

use crate::browser::{require_browser_tooling, run_browser_script, workspace_root};
use crate::dashboard::{Network, ago, now};
use pipeline_tests::MEMBER_PASSWORD;
use serde_json::json;

const SERVER: &str = "1c000000-0000-4000-8000-000000000001";
const PLAYER: &str = "1c000000-0000-4000-8000-0000000000a2";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_moderator_bans_and_revokes_from_the_investigate_page() {
    let root = workspace_root();
    require_browser_tooling(&root);
    let net = Network::start("Punish Browser Network").await;
    net.post(
        "/api/plugin/sessions",
        json!({"server_id": SERVER, "player_uuid": PLAYER, "player_name": "Griefer",
               "event": "join", "at": ago(now(), 60)}),
    )
    .await;
    net.stack.projected().await.expect("projected");
    let moderator = "mod@punish-browser.test";
    net.stack
        .create_member(&net.account.id, moderator, "Mia Moderator", "moderator")
        .await
        .expect("a member");
    run_browser_script(
        &root,
        "punish_page.mjs",
        &[
            ("BASE_URL", &net.stack.base),
            ("MODERATOR_LOGIN", moderator),
            ("PASSWORD", MEMBER_PASSWORD),
            ("PLAYER", PLAYER),
        ],
    )
    .await;
}
