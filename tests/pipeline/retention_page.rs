//! The Retention page in a real browser: `tests/browser/retention_page.mjs` signs in as a
//! moderator on a stack fed through ingest with the sessions of `retention::seed` (explicit past
//! times) and checks the table's figures and heat classes, the curves, opening a cohort's
//! players (each linking to their page), a bad form (422 on the page) and axe-core; then as a
//! viewer, whose cohort list names the players without links.

use crate::browser::{require_browser_tooling, run_browser_script, workspace_root};
use crate::retention::{A, B, C, E, seed};
use pipeline_tests::{MEMBER_PASSWORD, TestStack};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_retention_page_shows_cohorts_curves_and_a_cohorts_players_in_a_real_browser() {
    let root = workspace_root();
    require_browser_tooling(&root);
    let stack = TestStack::start().await.expect("stack starts");
    let account = stack
        .create_account("Retention Page")
        .await
        .expect("account");
    let other = stack.create_account("Elsewhere").await.expect("account");
    seed(&stack, &account, &other).await;
    stack.projected().await.expect("the projector catches up");
    let moderator = "moderator@retention.test";
    let viewer = "viewer@retention.test";
    for (login, name, role) in [
        (moderator, "Max Moderator", "moderator"),
        (viewer, "Vic Viewer", "viewer"),
    ] {
        stack
            .create_member(&account.id, login, name, role)
            .await
            .expect("a member");
    }
    let week_players = [A, B, C, E].join(",");
    run_browser_script(
        &root,
        "retention_page.mjs",
        &[
            ("BASE_URL", &stack.base),
            ("MODERATOR_LOGIN", moderator),
            ("VIEWER_LOGIN", viewer),
            ("PASSWORD", MEMBER_PASSWORD),
            ("WEEK_PLAYERS", &week_players),
        ],
    )
    .await;
}
