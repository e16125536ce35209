//! The Alerts pages in a real browser: `tests/browser/alerts.mjs` drives Debian's headless
//! Chromium through `/alerts` and a destination's page as an admin (a private address refused,
//! a webhook destination to the test receiver with its secret shown once, a rule, a test event
//! seen delivered in the log, "send again", a rotation, the disabled banner, axe-core) and as a
//! moderator (no link, 403). Then the receiver, which verifies every signature with the
//! `standardwebhooks` package, must have accepted the test event twice under one `webhook-id`.

use crate::browser::{require_browser_tooling, run_browser_script, workspace_root};
use pipeline_tests::{MEMBER_PASSWORD, TestStack};
use std::time::Duration;
use test_support::{WebhookReceiver, by_webhook_id};

#[tokio::test]
async fn an_admin_adds_a_webhook_and_a_rule_and_sees_a_test_event_delivered() {
    let root = workspace_root();
    require_browser_tooling(&root);
    // The receiver listens on loopback, which the default policy refuses.
    let stack = TestStack::start_with(|vars| vars.set("WEBHOOK_ALLOW_NETWORKS", "loopback"))
        .await
        .expect("stack starts");
    let receiver = WebhookReceiver::start().await.expect("the receiver starts");
    let account = stack.create_account("Alerts Page").await.expect("account");
    let admin = "admin@alerts.test";
    let moderator = "moderator@alerts.test";
    stack
        .create_members(
            &account.id,
            &[
                (admin, "Ada Admin", "admin"),
                (moderator, "Max Moderator", "moderator"),
            ],
        )
        .await
        .expect("the members");
    let control = format!("http://127.0.0.1:{}/_control", receiver.port());
    run_browser_script(
        &root,
        "alerts.mjs",
        &[
            ("BASE_URL", &stack.base),
            ("ADMIN_LOGIN", admin),
            ("MODERATOR_LOGIN", moderator),
            ("PASSWORD", MEMBER_PASSWORD),
            ("RECEIVER_URL", &receiver.url()),
            ("RECEIVER_CONTROL", &control),
            ("EXPECT_DELIVERED", "1"),
        ],
    )
    .await;

    // The test event and its "send again": one webhook-id, each copy signed with the secret
    // the page showed (the browser handed it to the receiver).
    let received = receiver
        .wait_until(
            Duration::from_secs(20),
            "the test event twice",
            |received| {
                by_webhook_id(received)
                    .values()
                    .any(|copies| copies.iter().filter(|r| r.accepted()).count() >= 2)
            },
        )
        .await
        .expect("the receiver accepted the test event and its resend");
    let tests: Vec<_> = received
        .iter()
        .filter(|r| r.event_type.as_deref() == Some("test"))
        .collect();
    assert!(
        tests.len() >= 2 && tests.iter().all(|r| r.verified),
        "{tests:#?}"
    );
    assert_eq!(
        tests[0].body["data"]["message"], "A test event from Warden",
        "{:#?}",
        tests[0].body
    );
}
