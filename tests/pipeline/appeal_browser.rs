//! The public appeal form in a real browser: `tests/browser/appeal_page.mjs` opens a ban's
//! appeal link with no sign-in, sends an appeal with the form and sees its status at the same
//! link; the form page and the status page are scanned with axe-core at 390 px and on a
//! desktop, light and dark.

use crate::appeal_form::{link, punish, start};
use crate::browser::{require_browser_tooling, run_browser_script, workspace_root};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_player_sends_an_appeal_from_the_form_and_sees_its_status() {
    let root = workspace_root();
    require_browser_tooling(&root);
    let net = start("Appeal Browser Network").await;
    let ids = punish(&net.stack, &net.account, &[("ban", "1", Some(86_400))]).await;
    let account = net.account.id.clone();
    let path = link(&net.stack, &account, &account, &ids[0], 0).await;
    run_browser_script(
        &root,
        "appeal_page.mjs",
        &[("BASE_URL", &net.stack.base), ("APPEAL_PATH", &path)],
    )
    .await;
}
