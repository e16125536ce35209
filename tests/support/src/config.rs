//! The settings a test starts a service with. Every test builds its configs through the
//! services' own loaders (`ingest::Config::from_vars`, `projector::Config::from_vars`,
//! `query_api::Config::from_vars`, `stack::StackConfig::from_vars`) from these variables, and
//! names only what it changes: one place decides what a test service looks like.

use shared::config::Vars;
use shared::event_log::EventLogConfig;
use shared::keys::{KeyKind, generate_secret};
use uuid::Uuid;

/// The variables of a service on `nats_url`: any free port, a fresh admin key (read it back
/// with `vars.get("ADMIN_KEY")`), short timings, and nothing from the shell the tests run in.
/// The event log is the default one (a private nats-server holds nothing else); add
/// `.with_event_log(&private_event_log())` to share a server, and `DATABASE_URL` for the
/// services that need one.
pub fn test_vars(nats_url: &str) -> Vars {
    Vars::empty()
        .set("NATS_URL", nats_url)
        .set("BIND_ADDR", "127.0.0.1:0")
        .set("ADMIN_KEY", generate_secret(KeyKind::Admin))
        .set("IP_HASH_KEY", "test-ip-hash-key")
        .set("PUBLISH_TIMEOUT_MS", 2000)
        .set("PROJECTOR_BATCH_WAIT_MS", 10)
        // The shortest flush, so a test sees `last_used_at` soon after a key is used.
        .set("KEY_USAGE_FLUSH_SECS", 1)
        // Webhook secrets are sealed with a fresh key per test; the alert tests' receiver
        // listens on 127.0.0.1, which only an explicit allowance lets a destination reach.
        .set(
            "WEBHOOK_SECRETS_KEY",
            Uuid::new_v4().simple().to_string() + &Uuid::new_v4().simple().to_string(),
        )
        .set("WEBHOOK_ALLOW_NETWORKS", "loopback")
        // Personal fields are sealed under a fresh master key per test.
        .set(
            "PRIVACY_MASTER_KEY",
            Uuid::new_v4().simple().to_string() + &Uuid::new_v4().simple().to_string(),
        )
}

/// An event log (stream, subjects and buckets) no other test uses.
pub fn private_event_log() -> EventLogConfig {
    let id = Uuid::new_v4().simple();
    EventLogConfig {
        stream: format!("T_{id}"),
        subject_prefix: format!("t{id}"),
        key_bucket: format!("K_{id}"),
        rate_bucket: format!("R_{id}"),
        privacy_bucket: format!("P_{id}"),
        ..EventLogConfig::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_calls_give_separate_logs_and_keys() {
        let (a, b) = (private_event_log(), private_event_log());
        assert_ne!(a.stream, b.stream);
        assert_ne!(a.key_bucket, b.key_bucket);
        let (a, b) = (test_vars("nats://x"), test_vars("nats://x"));
        assert_ne!(a.get("ADMIN_KEY"), b.get("ADMIN_KEY"));
        assert_eq!(a.get("NATS_URL").as_deref(), Some("nats://x"));
        let key = a.get("WEBHOOK_SECRETS_KEY").expect("a webhook secrets key");
        assert_eq!(key.len(), 64);
        assert_ne!(Some(key), b.get("WEBHOOK_SECRETS_KEY"));
        let alerts = shared::alerts::AlertsConfig::from_vars(&a).expect("valid alerts settings");
        assert!(alerts.sealing_key.is_some());
        assert!(alerts.networks.allows_loopback());
    }
}
