//! The privacy pages in a real browser: `tests/browser/erase_page.mjs` erases a
//! player from the dashboard (player page link, confirm page, the checkbox) and exports a
//! player's data; `tests/browser/privacy_settings.mjs` sets data retention on `/settings`.

use crate::browser::{require_browser_tooling, run_browser_script, workspace_root};
use crate::dashboard::{Network, ago, now};
use pipeline_tests::MEMBER_PASSWORD;
use serde_json::json;

const SERVER: &str = "e7a5e000-0000-4000-8000-00000000b001";
/// Erased from the dashboard.
const ERIN: &str = "e7a5e000-0000-4000-8000-00000000b0e1";
/// Kept: exported, and still named after Erin's erasure.
const KAI: &str = "e7a5e000-0000-4000-8000-00000000b0c2";
const ERIN_NAME: &str = "ErasableErin";
const ERIN_CHAT: &str = "erin hides the loot under the bridge";
const KAI_NAME: &str = "KeptKai";
const KAI_CHAT: &str = "kai waves at the spawn";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owner_erases_a_player_and_exports_another_in_a_real_browser() {
    let root = workspace_root();
    require_browser_tooling(&root);
    let net = Network::start("Erase Page Network").await;
    let now = now();
    for (player, name, seconds) in [(ERIN, ERIN_NAME, 900), (KAI, KAI_NAME, 890)] {
        net.post(
            "/api/plugin/sessions",
            json!({"server_id": SERVER, "player_uuid": player, "player_name": name,
                   "event": "join", "ip": "198.51.100.18", "at": ago(now, seconds)}),
        )
        .await;
    }
    net.post(
        "/api/plugin/sessions",
        json!({"server_id": SERVER, "player_uuid": ERIN, "player_name": ERIN_NAME,
               "event": "quit", "at": ago(now, 300)}),
    )
    .await;
    net.post(
        "/api/plugin/chat",
        json!([
            {"server_id": SERVER, "player_uuid": ERIN, "player_name": ERIN_NAME,
             "entry_type": "chat", "message": ERIN_CHAT, "channel": "global",
             "sent_at": ago(now, 600)},
            {"server_id": SERVER, "player_uuid": KAI, "player_name": KAI_NAME,
             "entry_type": "chat", "message": KAI_CHAT, "channel": "global",
             "sent_at": ago(now, 590)},
        ]),
    )
    .await;
    net.stack
        .projected()
        .await
        .expect("the network is projected");
    let owner = "owner@erase-page.test";
    let moderator = "moderator@erase-page.test";
    net.stack
        .create_members(
            &net.account.id,
            &[
                (owner, "Olga Owner", "owner"),
                (moderator, "Max Moderator", "moderator"),
            ],
        )
        .await
        .expect("the members");

    run_browser_script(
        &root,
        "erase_page.mjs",
        &[
            ("BASE_URL", &net.stack.base),
            ("OWNER_LOGIN", owner),
            ("MODERATOR_LOGIN", moderator),
            ("PASSWORD", MEMBER_PASSWORD),
            ("ERASED", ERIN),
            ("ERASED_NAME", ERIN_NAME),
            ("ERASED_CHAT", ERIN_CHAT),
            ("KEPT", KAI),
            ("KEPT_NAME", KAI_NAME),
            ("KEPT_CHAT", KAI_CHAT),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owner_sets_data_retention_on_the_settings_page_in_a_real_browser() {
    let root = workspace_root();
    require_browser_tooling(&root);
    let net = Network::start("Privacy Settings Network").await;
    let owner = "owner@privacy-settings.test";
    net.stack
        .create_member(&net.account.id, owner, "Olga Owner", "owner")
        .await
        .expect("the owner");
    run_browser_script(
        &root,
        "privacy_settings.mjs",
        &[
            ("BASE_URL", &net.stack.base),
            ("OWNER_LOGIN", owner),
            ("PASSWORD", MEMBER_PASSWORD),
        ],
    )
    .await;
    // What the page saved is what the admin API reads back.
    let path = format!("/api/admin/accounts/{}/privacy", net.account.id);
    let (status, body) = net
        .stack
        .call(reqwest::Method::GET, &path, &net.stack.admin_key, None)
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["retention"]["chat"], 30, "{body}");
    assert_eq!(body["clear_properties"], json!(["item"]), "{body}");
}
