//! The Funnels page's deeper results in a real browser: `tests/browser/funnels_page.mjs` signs
//! in as a moderator on a stack fed through ingest, runs a two-step funnel broken down by a
//! property of step 1, and checks time to convert, the breakdown (with its "(none)" row) and
//! the players who dropped off, whose links open their pages; axe-core scans the result.

use crate::browser::{require_browser_tooling, run_browser_script, workspace_root};
use crate::dashboard::{Network, ago, now};
use pipeline_tests::MEMBER_PASSWORD;
use reqwest::Method;
use serde_json::{Value, json};

const SERVER: &str = "9f000000-0000-4000-8000-000000000001";
/// Did both steps (region eu).
const CONVERTED: &str = "9f000000-0000-4000-8000-0000000000c1";
/// Started only (region us); lower id than the next, so listed first.
const DROPPED_US: &str = "9f000000-0000-4000-8000-0000000000d1";
/// Started only, with no region: the breakdown's "(none)".
const DROPPED_NONE: &str = "9f000000-0000-4000-8000-0000000000d2";

async fn event(net: &Network, player: &str, name: &str, properties: Value) {
    let body = json!({"player_uuid": player, "name": name, "properties": properties});
    let (status, answer) = net
        .stack
        .call(
            Method::POST,
            "/api/v1/plugin/events",
            &net.account.plugin_key,
            Some(body),
        )
        .await;
    assert_eq!(status, 202, "{name}: {answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_funnels_page_shows_time_to_convert_breakdown_and_drop_offs_in_a_real_browser() {
    let root = workspace_root();
    require_browser_tooling(&root);
    let net = Network::start("Funnels Page Network").await;
    let now = now();
    // Sessions make the players known, so each drop-off link opens a page (not a 404).
    net.post(
        "/api/plugin/heartbeat",
        json!({"server_id": SERVER, "name": "Lobby", "tps": 20, "player_count": 0,
               "max_players": 50}),
    )
    .await;
    let sessions: Vec<Value> = [CONVERTED, DROPPED_US, DROPPED_NONE]
        .iter()
        .enumerate()
        .flat_map(|(i, player)| {
            let name = format!("Funnel{i}");
            [("join", 900), ("quit", 800)].map(|(kind, seconds)| {
                json!({"server_id": SERVER, "player_uuid": player, "player_name": name,
                       "event": kind, "at": ago(now, seconds)})
            })
        })
        .collect();
    net.post("/api/plugin/sessions", json!(sessions)).await;
    event(&net, CONVERTED, "quest_started", json!({"region": "eu"})).await;
    event(&net, DROPPED_US, "quest_started", json!({"region": "us"})).await;
    event(&net, DROPPED_NONE, "quest_started", json!({"level": 2})).await;
    event(&net, CONVERTED, "quest_completed", json!({})).await;
    net.stack
        .projected()
        .await
        .expect("the network is projected");
    let login = "moderator@funnels.test";
    net.stack
        .create_member(&net.account.id, login, "Mia Moderator", "moderator")
        .await
        .expect("a moderator");

    let dropped = format!("{DROPPED_US},{DROPPED_NONE}");
    run_browser_script(
        &root,
        "funnels_page.mjs",
        &[
            ("BASE_URL", &net.stack.base),
            ("LOGIN", login),
            ("PASSWORD", MEMBER_PASSWORD),
            ("CONVERTED", CONVERTED),
            ("DROPPED", &dropped),
        ],
    )
    .await;
}
