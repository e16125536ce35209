//! The appeals inbox in a real browser: `tests/browser/appeals_inbox.mjs` signs in as a
//! moderator, finds the Appeals link with its badge, checks the inbox and an appeal at 390 px
//! and on a desktop, light and dark, with axe-core and for sideways scrolling, then accepts the
//! appeal from its page and sees it accepted and the ban lifted.

use super::submit;
use crate::browser::{require_browser_tooling, run_browser_script, workspace_root};
use crate::dashboard::{Network, ago, items, now};
use pipeline_tests::MEMBER_PASSWORD;
use serde_json::json;
use uuid::Uuid;

const SERVER: &str = "a99eb100-0000-4000-8000-000000000001";
const PLAYER: &str = "a99eb100-0000-4000-8000-0000000000a2";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_moderator_accepts_an_appeal_from_the_inbox() {
    let root = workspace_root();
    require_browser_tooling(&root);
    let net = Network::start("Appeals Browser Network").await;
    let now = now();
    net.post(
        "/api/plugin/sessions",
        json!({"server_id": SERVER, "player_uuid": PLAYER, "player_name": "Appealer",
               "event": "join", "at": ago(now, 600)}),
    )
    .await;
    net.post(
        "/api/plugin/punishments",
        json!({"server_id": SERVER, "player_uuid": PLAYER, "player_name": "Appealer",
               "type": "ban", "reason": "fly hacks", "staff_name": "ModMike",
               "issued_at": ago(now, 300), "expires_at": ago(now, -7 * 86_400),
               "scope": "global", "source_plugin": "litebans", "external_id": "1"}),
    )
    .await;
    let listed = net
        .wait_for(&format!("/api/players/{PLAYER}/punishments"), |page| {
            !items(page).is_empty()
        })
        .await;
    let ban: Uuid = items(&listed)[0]["id"]
        .as_str()
        .expect("an id")
        .parse()
        .expect("a uuid");
    let player: Uuid = PLAYER.parse().expect("a uuid");
    let message = "I was lagging on a bad connection, not flying. \
                   Here is a clip of the whole round: https://clips.example.test/round-12";
    let appeal = submit(&net.stack, &net.account.id, ban, player, message).await;
    net.stack.projected().await.expect("projected");
    let moderator = "mod@appeals-browser.test";
    net.stack
        .create_member(&net.account.id, moderator, "Mia Moderator", "moderator")
        .await
        .expect("a member");
    run_browser_script(
        &root,
        "appeals_inbox.mjs",
        &[
            ("BASE_URL", &net.stack.base),
            ("MODERATOR_LOGIN", moderator),
            ("PASSWORD", MEMBER_PASSWORD),
            ("APPEAL", &appeal.to_string()),
        ],
    )
    .await;
    let (status, page) = net.get(&format!("/api/players/{PLAYER}/punishments")).await;
    assert_eq!(status, 200);
    assert_eq!(
        items(&page)[0]["is_active"],
        false,
        "the accepted appeal lifted the ban"
    );
}
