//! Nothing secret in logs: a run of the whole stack at TRACE level, with every log line
//! captured, must not contain the admin key, the privacy master key, any plugin or dashboard
//! secret (created, rotated or refused), or a player IP.
//!
//! The capturing subscriber is the thread's default and the test runs on a current-thread
//! runtime, so it sees every event of every task the stack spawns. It is the only test of its
//! binary: tracing caches each callsite's interest for the whole process, and a test running
//! beside it that hit the same callsites first was seen to leave lines uncaptured.

use pipeline_tests::{TestStack, eventually};
use reqwest::Method;
use serde_json::{Value, json};
use shared::keys::{KeyKind, generate_secret};
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tracing_subscriber::util::SubscriberInitExt;

const SERVER: &str = "1a2b3c4d-0000-4000-8000-0000000000d1";
const PLAYER: &str = "6e1f0b7a-3c2d-4b59-9e8f-7a6b5c4d3ed1";
const PLAYER_IPS: [&str; 2] = ["203.0.113.77", "2001:db8::beef:77"];

/// Every byte the subscriber wrote.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap_or_else(|p| p.into_inner())).into_owned()
    }
}

fn secret_of(body: &Value) -> String {
    body["key"].as_str().expect("a secret").to_owned()
}

#[tokio::test(flavor = "current_thread")]
async fn no_secret_or_player_ip_reaches_the_logs() {
    let captured = Captured::default();
    let writer = captured.clone();
    let _capture = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish()
        .set_default();

    let stack = TestStack::start().await.expect("stack starts");
    let account = stack.create_account("Secrets").await.expect("account");
    let mut secrets = vec![
        stack.admin_key.clone(),
        account.plugin_key.clone(),
        account.dashboard_key.clone(),
        stack.vars.get("PRIVACY_MASTER_KEY").expect("a master key"),
    ];
    let keys_path = format!("/api/admin/accounts/{}/keys", account.id);
    let (_, listed) = stack
        .call(Method::GET, &keys_path, &stack.admin_key, None)
        .await;
    let key_id = |kind: &str| {
        listed["items"]
            .as_array()
            .and_then(|items| items.iter().find(|k| k["kind"] == kind))
            .and_then(|k| k["id"].as_str())
            .expect("key listed")
            .to_owned()
    };
    let (plugin_id, dashboard_id) = (key_id("plugin"), key_id("dashboard"));

    // Player IPs go through ingest (which hashes them).
    for ip in PLAYER_IPS {
        let join = json!({"server_id": SERVER, "player_uuid": PLAYER, "player_name": "Steve",
                          "event": "join", "ip": ip});
        let (status, body) = stack
            .call(
                Method::POST,
                "/api/plugin/sessions",
                &account.plugin_key,
                Some(join),
            )
            .await;
        assert_eq!(status, 202, "{body}");
    }
    let (status, _) = stack
        .call(Method::GET, "/api/servers", &account.dashboard_key, None)
        .await;
    assert_eq!(status, 200);

    // Rotation (with grace), revocation, and a second rotation of the new key.
    let rotate = format!("/api/admin/keys/{plugin_id}/rotate");
    let (status, rotated) = stack
        .call(
            Method::POST,
            &rotate,
            &stack.admin_key,
            Some(json!({"grace_seconds": 60})),
        )
        .await;
    assert_eq!(status, 201, "{rotated}");
    secrets.push(secret_of(&rotated));
    let rotated_id = rotated["id"].as_str().expect("id").to_owned();
    let rotate_again = format!("/api/admin/keys/{rotated_id}/rotate");
    let (status, again) = stack
        .call(Method::POST, &rotate_again, &stack.admin_key, None)
        .await;
    assert_eq!(status, 201, "{again}");
    secrets.push(secret_of(&again));
    let (status, _) = stack
        .call(
            Method::DELETE,
            &format!("/api/admin/keys/{dashboard_id}"),
            &stack.admin_key,
            None,
        )
        .await;
    assert_eq!(status, 204);
    let (status, extra) = stack
        .call(
            Method::POST,
            &keys_path,
            &stack.admin_key,
            Some(json!({"kind": "dashboard"})),
        )
        .await;
    assert_eq!(status, 201);
    secrets.push(secret_of(&extra));

    // Refused: an unknown key, the revoked key, a key of the wrong kind, a malformed header.
    let unknown = generate_secret(KeyKind::Plugin);
    secrets.push(unknown.clone());
    for key in [
        &unknown,
        &account.dashboard_key,
        &stack.admin_key,
        &account.plugin_key,
    ] {
        stack
            .call(Method::POST, "/api/plugin/heartbeat", key, Some(json!({})))
            .await;
        stack.call(Method::GET, "/api/servers", key, None).await;
    }
    let revoked_refused = eventually(Duration::from_secs(5), || async {
        let (status, _) = stack
            .call(Method::GET, "/api/servers", &account.dashboard_key, None)
            .await;
        (status == 401).then_some(())
    })
    .await;
    assert!(revoked_refused.is_some(), "the revoked key still works");
    let (status, _) = stack
        .call(Method::GET, "/api/admin/accounts", &stack.admin_key, None)
        .await;
    assert_eq!(status, 200);
    // Let a usage report go out and be written.
    let reported = eventually(Duration::from_secs(10), || async {
        let (_, keys) = stack
            .call(Method::GET, &keys_path, &stack.admin_key, None)
            .await;
        keys["items"]
            .as_array()?
            .iter()
            .any(|k| k["id"] == plugin_id.as_str() && !k["last_used_at"].is_null())
            .then_some(())
    })
    .await;
    assert!(reported.is_some(), "key usage was not reported");
    stack.projected().await.expect("projected");
    drop(stack);

    let logs = captured.text();
    assert!(
        logs.contains("key issued"),
        "the capture saw the stack's logs"
    );
    for secret in &secrets {
        let random_part = secret.rsplit('_').next().unwrap_or(secret);
        assert!(!logs.contains(random_part), "a secret is in the logs");
    }
    for ip in PLAYER_IPS {
        assert!(!logs.contains(ip), "player IP {ip} is in the logs");
    }
}
