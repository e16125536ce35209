//! A network on a running stack: plugin writes in, dashboard reads out, polled until the
//! projector has caught up.

use chrono::{DateTime, Duration as Span, SecondsFormat, Utc};
use pipeline_tests::{TestAccount, TestStack, eventually_every};
use reqwest::Method;
use serde_json::{Value, json};
use std::time::Duration;

/// How long a read may take to reflect a write (or a condition on the clock to hold): generous,
/// the whole suite runs at once on a small, busy machine.
const CATCH_UP: Duration = pipeline_tests::WAIT;
/// Between re-reads of a condition that waits on the clock (60 reads a minute is the quota).
const READ_INTERVAL: Duration = Duration::from_millis(500);

/// One account on its own stack.
pub(crate) struct Network {
    pub(crate) stack: TestStack,
    pub(crate) account: TestAccount,
}

impl Network {
    pub(crate) async fn start(name: &str) -> Network {
        let stack = TestStack::start().await.expect("stack starts");
        let account = stack.create_account(name).await.expect("account");
        Network { stack, account }
    }

    /// Another account on the same stack.
    pub(crate) async fn other_account(&self, name: &str) -> TestAccount {
        self.stack.create_account(name).await.expect("account")
    }

    /// A plugin write that must be accepted whole.
    pub(crate) async fn post(&self, path: &str, body: Value) {
        post_as(&self.stack, &self.account, path, body).await;
    }

    /// A dashboard read: status and body.
    pub(crate) async fn get(&self, path: &str) -> (u16, Value) {
        get_as(&self.stack, &self.account, path).await
    }

    /// Polls a dashboard read until `ready` holds for its 200 body; panics with the last answer.
    pub(crate) async fn wait_for(&self, path: &str, ready: impl Fn(&Value) -> bool) -> Value {
        wait_as(&self.stack, &self.account, path, ready).await
    }

    /// Replaces the account's settings.
    pub(crate) async fn settings(&self, staff_groups: &[&str], sync_interval_seconds: u32) {
        let path = format!("/api/admin/accounts/{}/settings", self.account.id);
        let body =
            json!({"staff_groups": staff_groups, "sync_interval_seconds": sync_interval_seconds});
        let (status, answer) = self
            .stack
            .call(Method::PUT, &path, &self.stack.admin_key, Some(body))
            .await;
        assert_eq!(status, 200, "{answer}");
    }
}

pub(crate) async fn post_as(stack: &TestStack, account: &TestAccount, path: &str, body: Value) {
    let (status, answer) = stack
        .call(Method::POST, path, &account.plugin_key, Some(body))
        .await;
    assert_eq!(status, 202, "POST {path}: {answer}");
    assert_eq!(answer["rejected"], json!([]), "POST {path}: {answer}");
}

pub(crate) async fn get_as(stack: &TestStack, account: &TestAccount, path: &str) -> (u16, Value) {
    stack
        .call(Method::GET, path, &account.dashboard_key, None)
        .await
}

pub(crate) async fn wait_as(
    stack: &TestStack,
    account: &TestAccount,
    path: &str,
    ready: impl Fn(&Value) -> bool,
) -> Value {
    stack.projected().await.expect("the projector catches up");
    // Caught up, reads reflect every write; conditions that wait on the clock (a server going
    // offline) are re-read sparingly, well inside the dashboard quota.
    let found = eventually_every(CATCH_UP, READ_INTERVAL, || async {
        let (status, body) = get_as(stack, account, path).await;
        (status == 200 && ready(&body)).then_some(body)
    })
    .await;
    match found {
        Some(body) => body,
        None => {
            let (status, body) = get_as(stack, account, path).await;
            panic!("GET {path} never got there; last answer {status}: {body}")
        }
    }
}

/// Now truncated to whole seconds, so sent and returned timestamps compare as text.
pub(crate) fn now() -> DateTime<Utc> {
    DateTime::from_timestamp(Utc::now().timestamp(), 0).unwrap_or_default()
}

/// RFC 3339 UTC with `Z`, as the API returns whole-second times.
pub(crate) fn iso(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

/// `iso(now - seconds)`.
pub(crate) fn ago(now: DateTime<Utc>, seconds: i64) -> String {
    iso(now - Span::seconds(seconds))
}

/// The `items` of a list response.
pub(crate) fn items(body: &Value) -> Vec<Value> {
    body["items"].as_array().cloned().unwrap_or_default()
}

/// Follows `next_cursor` from `path` (which has a `?`) to the end; returns every page.
pub(crate) async fn pages(network: &Network, path: &str) -> Vec<Vec<Value>> {
    let mut pages = Vec::new();
    let mut next = path.to_owned();
    loop {
        let (status, body) = network.get(&next).await;
        assert_eq!(status, 200, "{next}: {body}");
        pages.push(items(&body));
        match body["next_cursor"].as_str() {
            Some(cursor) => next = format!("{path}&cursor={cursor}"),
            None => return pages,
        }
        assert!(pages.len() < 100, "paging does not end");
    }
}
