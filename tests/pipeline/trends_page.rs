//! The Trends page in a real browser: `tests/browser/trends_page.mjs` signs in as a viewer on
//! a stack fed through ingest with events at explicit times (the hand-counted data of
//! `trends::seed`), fills the form, and checks the table's numbers, the chart's data (the
//! previous period dashed) and that uPlot drew it; axe-core scans the result. Before that, the
//! page as it opens: joins per day (two seeded yesterday), the y axis from zero, a tooltip,
//! the table equal to the chart, and the chart-times setting.

use crate::browser::{require_browser_tooling, run_browser_script, workspace_root};
use crate::dashboard::Network;
use pipeline_tests::MEMBER_PASSWORD;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_trends_page_draws_and_tabulates_counts_with_the_previous_period_in_a_real_browser() {
    let root = workspace_root();
    require_browser_tooling(&root);
    let net = Network::start("Trends Page Network").await;
    crate::trends::seed(&net.stack, &net.account).await;
    // Two joins yesterday (UTC): the default answer (joins per day, last 30 days) draws them.
    let yesterday = (chrono::Utc::now() - chrono::Duration::days(1)).date_naive();
    let at = |hour| {
        yesterday
            .and_hms_opt(hour, 0, 0)
            .map(|t| t.and_utc().to_rfc3339())
            .unwrap_or_default()
    };
    let join = |player: &str, hour| {
        serde_json::json!({"server_id": "7d6b4c0e-1d1f-4f7e-9a53-8c1f3f3c2a10",
            "player_uuid": player, "player_name": "p", "event": "join", "at": at(hour)})
    };
    net.post(
        "/api/plugin/sessions",
        serde_json::json!([
            join("069a79f4-44e9-4726-a5be-fca90e38aaf5", 10),
            join("853c80ef-3c37-49fd-aa49-938b674adae6", 11),
        ]),
    )
    .await;
    net.stack
        .projected()
        .await
        .expect("the network is projected");
    let login = "viewer@trends.test";
    net.stack
        .create_member(&net.account.id, login, "Vic Viewer", "viewer")
        .await
        .expect("a viewer");
    run_browser_script(
        &root,
        "trends_page.mjs",
        &[
            ("BASE_URL", &net.stack.base),
            ("LOGIN", login),
            ("PASSWORD", MEMBER_PASSWORD),
        ],
    )
    .await;
}
