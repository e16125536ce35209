//! What every browser test wrapper shares: the tooling check, the workspace root, and running
//! one `tests/browser/<script>.mjs` against a stack with Debian's headless Chromium.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

pub(crate) const CHROMIUM: &str = "/usr/bin/chromium";
/// Each script bounds itself (120–240 s); this only guards against a hung node.
const BROWSER_TEST_LIMIT: Duration = Duration::from_secs(300);

pub(crate) fn workspace_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    root.canonicalize().unwrap_or(root)
}

/// Fails (never skips) when something the browser test needs is missing.
pub(crate) fn require_browser_tooling(root: &Path) {
    let install = "run ./deploy/test.sh, which installs chromium and the npm dependencies";
    let node = std::process::Command::new("node").arg("--version").output();
    assert!(
        node.is_ok_and(|output| output.status.success()),
        "node is not on PATH: {install}"
    );
    assert!(
        Path::new(CHROMIUM).exists(),
        "{CHROMIUM} is missing: {install}"
    );
    let playwright = root.join("tests/browser/node_modules/playwright-core");
    assert!(
        playwright.exists(),
        "{} is missing: {install}",
        playwright.display()
    );
}

/// Runs `tests/browser/<script>` with `env` (plus `CHROMIUM_BIN`); prints its output and
/// panics when it fails.
pub(crate) async fn run_browser_script(root: &Path, script: &str, env: &[(&str, &str)]) {
    let mut command = tokio::process::Command::new("node");
    command
        .arg(root.join("tests/browser").join(script))
        .current_dir(root)
        .env("CHROMIUM_BIN", CHROMIUM)
        .stdin(Stdio::null())
        .kill_on_drop(true);
    for (key, value) in env {
        command.env(key, value);
    }
    let output = tokio::time::timeout(BROWSER_TEST_LIMIT, command.output())
        .await
        .expect("the browser test finished in time")
        .expect("node runs");
    println!("{}", String::from_utf8_lossy(&output.stdout));
    eprintln!("{}", String::from_utf8_lossy(&output.stderr));
    assert!(
        output.status.success(),
        "tests/browser/{script} failed ({}); its output is above",
        output.status
    );
}
