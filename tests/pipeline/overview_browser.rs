//! The Overview's players chart in a real browser: `tests/browser/overview_chart.mjs` reads the
//! drawn chart on a network fed heartbeats at explicit times (one five-minute bucket averages
//! 24.33 players), checks the y axis starts at zero, the tooltip gives the exact value with the
//! time in the viewer's zone and UTC, the table beside the chart is the chart's own points, and
//! at 390 px every tick label stays inside the chart.

use crate::browser::{require_browser_tooling, run_browser_script, workspace_root};
use crate::dashboard::{Network, iso, now};
use chrono::{Duration, DurationRound};
use pipeline_tests::MEMBER_PASSWORD;
use serde_json::json;

const SERVER: &str = "5f000000-0000-4000-8000-0000000000c1";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_overview_chart_draws_from_zero_with_exact_tooltips_and_its_own_points_as_a_table() {
    let root = workspace_root();
    require_browser_tooling(&root);
    let net = Network::start("Overview Chart Network").await;
    let now = now();
    let bucket = |ago: i64| {
        (now - Duration::minutes(ago))
            .duration_trunc(Duration::minutes(5))
            .unwrap_or(now)
    };
    let beat = |at, players: i64| {
        json!({"server_id": SERVER, "name": "Lobby", "tps": 20, "player_count": players,
               "max_players": 50, "timestamp": iso(at)})
    };
    // Two hours ago: 10 players. An hour ago, three heartbeats in one bucket: 24, 24 and 25
    // (24.33 on average). Now: 2.
    let hour_ago = bucket(60);
    net.post(
        "/api/plugin/heartbeat",
        json!([
            beat(bucket(120) + Duration::seconds(30), 10),
            beat(hour_ago + Duration::seconds(10), 24),
            beat(hour_ago + Duration::seconds(70), 24),
            beat(hour_ago + Duration::seconds(130), 25),
            beat(now, 2),
        ]),
    )
    .await;
    net.stack
        .projected()
        .await
        .expect("the network is projected");
    let login = "viewer@overview.test";
    net.stack
        .create_member(&net.account.id, login, "Vera Viewer", "viewer")
        .await
        .expect("a viewer");
    run_browser_script(
        &root,
        "overview_chart.mjs",
        &[
            ("BASE_URL", &net.stack.base),
            ("LOGIN", login),
            ("PASSWORD", MEMBER_PASSWORD),
            ("BUSIEST_AT", &hour_ago.timestamp().to_string()),
        ],
    )
    .await;
}
