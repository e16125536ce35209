//! Hostile records through every plugin endpoint: each one is refused with a 422 that names the
//! field, or stored and read back as documented (`docs/rate-limits.md`, "What ingest accepts");
//! and none of them keeps another account's writes from being readable within seconds.
//!
//! Refused: NUL in any text field or in a custom event's property key or value, integers past
//! their column (`player_count` 2^40), numbers past their range (1e308, -1e308), record times
//! before 2000 or in year 9999, strings longer than their field (750 four-byte characters, 3,000
//! bytes, in indexed fields), properties nested past 64 levels.
//! Stored exactly: RTL overrides, zero-width characters, emoji, HTML and script in names and
//! messages, a field at its full length in four-byte characters, an expiry in year 9999, and
//! properties 60 levels deep holding ±1e308.

mod cases;

use crate::dashboard::{ago, now};
use cases::{Case, Expect, PLAYER, TRICKY, cases, chat, listed};
use pipeline_tests::{TestAccount, TestStack, eventually_every};
use reqwest::Method;
use serde_json::{Value, json};
use std::time::Duration;

/// The other account's server and player: its normal writes must come through.
const OTHER_SERVER: &str = "600dc0de-0000-4000-8000-000000000001";
const OTHER_PLAYER: &str = "600dc0de-0000-4000-8000-0000000000bb";
/// How long the other account's write may take to become readable (generous: the whole suite
/// runs at once on a small, busy machine).
const CATCH_UP: Duration = pipeline_tests::WAIT;
/// Between reads while waiting (the dashboard quota is 60 a minute per key).
const READ_INTERVAL: Duration = Duration::from_millis(500);

/// Posts every case; returns the problems found (each a line of the failure message).
async fn post_cases(stack: &TestStack, account: &TestAccount, cases: &[Case]) -> Vec<String> {
    let mut problems = Vec::new();
    for case in cases {
        let (status, answer) = stack
            .call(
                Method::POST,
                case.path,
                &account.plugin_key,
                Some(case.body.clone()),
            )
            .await;
        let outcome = match &case.expect {
            Expect::Refused(field) => {
                // A property is named by its path: `properties.note`.
                let names_field = answer["errors"].as_array().is_some_and(|errors| {
                    errors
                        .iter()
                        .filter_map(|e| e["field"].as_str())
                        .any(|named| named == *field || named.starts_with(&format!("{field}.")))
                });
                (status == 422 && names_field).then_some(format!("refused {status}"))
            }
            Expect::Stored { .. } => {
                let whole = answer["rejected"] == json!([]) || answer["id"].is_string();
                (status == 202 && whole).then_some("accepted 202".to_owned())
            }
        };
        match outcome {
            Some(outcome) => println!("{:<48} {} {outcome}", case.what, case.path),
            None => problems.push(format!(
                "{} ({}): expected {}, got {status} {answer}",
                case.what,
                case.path,
                match &case.expect {
                    Expect::Refused(field) => format!("422 naming {field}"),
                    Expect::Stored { .. } => "202 with nothing rejected".to_owned(),
                }
            )),
        }
    }
    problems
}

/// Polls a dashboard read of `account` until `holds`, for at most [`CATCH_UP`].
async fn readable(
    stack: &TestStack,
    account: &TestAccount,
    path: &str,
    holds: impl Fn(&Value) -> bool,
) -> Result<(), String> {
    let found = eventually_every(CATCH_UP, READ_INTERVAL, || async {
        let (status, body) = stack
            .call(Method::GET, path, &account.dashboard_key, None)
            .await;
        (status == 200 && holds(&body)).then_some(())
    })
    .await;
    match found {
        Some(()) => Ok(()),
        None => {
            let (status, body) = stack
                .call(Method::GET, path, &account.dashboard_key, None)
                .await;
            Err(format!("GET {path}: last answer {status} {body}"))
        }
    }
}

#[tokio::test]
async fn hostile_records_are_refused_or_stored_and_never_stop_other_accounts() {
    let stack = TestStack::start().await.expect("stack starts");
    let hostile = stack
        .create_account("Hostile Network")
        .await
        .expect("account");
    let other = stack
        .create_account("Other Network")
        .await
        .expect("account");
    let cases = cases();
    assert!(cases.len() >= 15);
    let mut problems = post_cases(&stack, &hostile, &cases).await;

    // A batch: the NUL record is refused by index, its neighbour stored.
    let batch = json!([
        chat(json!({"message": "x\u{0}y"})),
        chat(json!({"message": "batch neighbour", "sent_at": ago(now(), 40)}))
    ]);
    let (status, answer) = stack
        .call(
            Method::POST,
            "/api/plugin/chat",
            &hostile.plugin_key,
            Some(batch),
        )
        .await;
    if status != 202 || answer["accepted"] != 1 || answer["rejected"][0]["index"] != 0 {
        problems.push(format!(
            "a batch with one NUL record: got {status} {answer}"
        ));
    }

    // Another account's ordinary writes, after all of the above, come through within seconds.
    let normal = [
        (
            "/api/plugin/heartbeat",
            json!({"server_id": OTHER_SERVER, "tps": 19.5, "player_count": 3, "max_players": 50}),
        ),
        (
            "/api/plugin/chat",
            json!({"server_id": OTHER_SERVER, "player_uuid": OTHER_PLAYER, "player_name": "Calm",
                "entry_type": "chat", "message": "all quiet"}),
        ),
    ];
    for (path, body) in normal {
        let (status, answer) = stack
            .call(Method::POST, path, &other.plugin_key, Some(body))
            .await;
        assert_eq!(status, 202, "the other account's {path}: {answer}");
    }
    let server_seen = readable(&stack, &other, "/api/servers", |body| {
        listed(body, "id", &json!(OTHER_SERVER))
    })
    .await;
    let chat_seen = readable(
        &stack,
        &other,
        &format!("/api/players/{OTHER_PLAYER}/chatlog"),
        |body| listed(body, "message", &json!("all quiet")),
    )
    .await;
    let flowing = server_seen.is_ok() && chat_seen.is_ok();
    for seen in [server_seen, chat_seen] {
        if let Err(last) = seen {
            problems.push(format!(
                "the other account's write was not readable within {CATCH_UP:?}: {last}"
            ));
        }
    }

    // The hostile account's stored records, once everything in the log is applied.
    if flowing && stack.projected().await.is_ok() {
        for case in &cases {
            if let Expect::Stored { path, holds } = &case.expect {
                let (status, body) = stack
                    .call(Method::GET, path, &hostile.dashboard_key, None)
                    .await;
                if status != 200 || !holds(&body) {
                    problems.push(format!(
                        "{}: not read back as sent from {path}: {status} {body}",
                        case.what
                    ));
                }
            }
        }
        let chatlog = format!("/api/players/{PLAYER}/chatlog?limit=500");
        let (_, body) = stack
            .call(Method::GET, &chatlog, &hostile.dashboard_key, None)
            .await;
        let messages: Vec<&str> = body["items"]
            .as_array()
            .map(|items| items.iter().filter_map(|i| i["message"].as_str()).collect())
            .unwrap_or_default();
        if messages != ["batch neighbour", TRICKY] {
            problems.push(format!(
                "the hostile chatlog holds exactly the stored lines: {messages:?}"
            ));
        }
    } else {
        problems.push("stored records not checked: the pipeline did not catch up".to_owned());
    }
    assert!(
        problems.is_empty(),
        "{} problem(s):\n{}",
        problems.len(),
        problems.join("\n")
    );
}
