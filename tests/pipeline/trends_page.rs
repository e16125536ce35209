//! The Trends page in a real browser: `tests/browser/trends_page.mjs` signs in as a viewer on
//! a stack fed through ingest with events at explicit times (the hand-counted data of
//! `trends::seed`), fills the form, and checks the table's numbers, the chart's data (the
//! previous period dashed) and that uPlot drew it; axe-core scans the result.

use crate::browser::{require_browser_tooling, run_browser_script, workspace_root};
use crate::dashboard::Network;
use pipeline_tests::MEMBER_PASSWORD;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_trends_page_draws_and_tabulates_counts_with_the_previous_period_in_a_real_browser() {
    let root = workspace_root();
    require_browser_tooling(&root);
    let net = Network::start("Trends Page Network").await;
    crate::trends::seed(&net.stack, &net.account).await;
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
