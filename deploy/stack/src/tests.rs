//! The stack's settings print no secret: every key and URL password of the services'
//! configurations is redacted in `Debug`.

use crate::StackConfig;
use shared::config::Vars;

const SECRETS: [&str; 8] = [
    "nats-pass-a1",
    "wdn_admin_stack0123456789",
    "ip-hash-b2",
    "pg-pass-c3",
    "replica-pass-d4",
    "audit-ip-e5",
    "webhook-sealing-f6-0123456789abcdefghijkl",
    "privacy-master-g7-0123456789abcdefghijklm",
];

#[test]
fn debug_shows_no_secret() -> anyhow::Result<()> {
    let vars = Vars::empty()
        .set("NATS_URL", "nats://stack:nats-pass-a1@127.0.0.1:4222")
        .set("ADMIN_KEY", "wdn_admin_stack0123456789")
        .set("IP_HASH_KEY", "ip-hash-b2")
        .set(
            "WEBHOOK_SECRETS_KEY",
            "webhook-sealing-f6-0123456789abcdefghijkl",
        )
        .set(
            "PRIVACY_MASTER_KEY",
            "privacy-master-g7-0123456789abcdefghijklm",
        )
        .set(
            "DATABASE_URL",
            "postgres://warden:pg-pass-c3@127.0.0.1:5432/warden",
        )
        .set(
            "READ_DATABASE_URL",
            "postgres://r:replica-pass-d4@replica/warden",
        );
    let mut config = StackConfig::from_vars(&vars)?;
    // Ingest and the audit log share IP_HASH_KEY in a real stack; a different one here shows
    // the dashboard's is redacted on its own.
    config.query.dashboard.ip_hash_key = Some("audit-ip-e5".into());
    let shown = format!("{config:?} {config:#?}");
    for secret in SECRETS {
        assert!(!shown.contains(secret), "{secret} printed in {shown}");
    }
    // Still useful to an operator: which servers were meant.
    assert!(shown.contains("postgres://warden:***@127.0.0.1:5432/warden"));
    assert!(shown.contains("nats://stack:***@127.0.0.1:4222"));
    Ok(())
}
