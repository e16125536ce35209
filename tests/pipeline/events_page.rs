//! The Events and Funnels pages in a real browser: `tests/browser/events_page.mjs` signs in as
//! a viewer and drives Debian's headless Chromium through the pages against a running stack
//! (filters, live events, pause, a dropped connection, the funnel builder, sign-out ending the
//! live feed). `./deploy/test.sh` installs chromium and the script's npm dependencies first.

use crate::browser::{require_browser_tooling, run_browser_script, workspace_root};
use pipeline_tests::{MEMBER_PASSWORD, TestStack};
use reqwest::Method;
use serde_json::{Value, json};
// Re-exported for the wrappers that still import them from here (funnels, retention, trends).

const PLAYER_A: &str = "069a79f4-44e9-4726-a5be-fca90e38aaf5";
const PLAYER_B: &str = "61699b2e-d327-4a01-9f1e-0ea8c3f06bc6";
async fn post_event(stack: &TestStack, key: &str, player: &str, name: &str, properties: Value) {
    let body = json!({"player_uuid": player, "name": name, "properties": properties});
    let (status, accepted) = stack
        .call(Method::POST, "/api/v1/plugin/events", key, Some(body))
        .await;
    assert_eq!(status, 202, "{name}: {accepted}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_events_page_filters_streams_live_and_builds_a_funnel_in_a_real_browser() {
    let root = workspace_root();
    require_browser_tooling(&root);
    let stack = TestStack::start().await.expect("stack");
    let account = stack.create_account("Browser").await.expect("account");
    let key = &account.plugin_key;

    // Two players start a quest, one completes it: the funnel is 2 → 1. Each write waits for
    // its 202, so the receipt times (their occurred_at) follow this order.
    post_event(
        &stack,
        key,
        PLAYER_A,
        "quest_started",
        json!({"quest": "tutorial"}),
    )
    .await;
    post_event(
        &stack,
        key,
        PLAYER_B,
        "quest_started",
        json!({"quest": "tutorial"}),
    )
    .await;
    post_event(
        &stack,
        key,
        PLAYER_A,
        "quest_completed",
        json!({"quest": "tutorial"}),
    )
    .await;
    // Markup in event data must show as text.
    let probe = json!({"html": "<img id=\"pwned\" src=\"x\">", "nested": {"level": 2.50}});
    post_event(&stack, key, PLAYER_B, "xss_probe", probe).await;
    stack
        .projected()
        .await
        .expect("the seeded events are projected");
    let (status, page) = stack
        .call(Method::GET, "/api/v1/events", &account.dashboard_key, None)
        .await;
    assert_eq!(status, 200);
    assert_eq!(page["items"].as_array().map_or(0, Vec::len), 4, "{page}");

    // No key prompt and no data without a session: the page sends a visitor to sign in.
    let no_redirects = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    for path in ["/events", "/funnels", "/events/stream", "/events/feed"] {
        let answer = no_redirects
            .get(format!("{}{path}", stack.base))
            .send()
            .await
            .expect("GET");
        assert_eq!(answer.status(), 303, "{path}");
        assert_eq!(answer.headers()["location"], "/login", "{path}");
    }
    let login = "viewer@events.test";
    stack
        .create_member(&account.id, login, "Vera Viewer", "viewer")
        .await
        .expect("a viewer");

    run_browser_script(
        &root,
        "events_page.mjs",
        &[
            ("BASE_URL", &stack.base),
            ("LOGIN", login),
            ("PASSWORD", MEMBER_PASSWORD),
            ("PLUGIN_KEY", &account.plugin_key),
            ("LIVE_PLAYER_UUID", PLAYER_A),
            ("EXPECTED_FUNNEL", "quest_started:2,quest_completed:1"),
        ],
    )
    .await;
}
