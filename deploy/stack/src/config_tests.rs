//! The stack's settings print no secret: every key and URL password of the three services'
//! configurations is redacted in `Debug`.

use crate::StackConfig;
use shared::config::CommonConfig;
use shared::event_log::EventLogConfig;
use shared::serve::ServeLimits;
use shared::telemetry::LogFormat;
use std::net::SocketAddr;
use std::time::Duration;

const SECRETS: [&str; 6] = [
    "nats-pass-a1",
    "wdn_admin_stack0123456789",
    "ip-hash-b2",
    "pg-pass-c3",
    "replica-pass-d4",
    "audit-ip-e5",
];

#[test]
fn debug_shows_no_secret() {
    let common = CommonConfig {
        nats_url: "nats://stack:nats-pass-a1@127.0.0.1:4222".into(),
        event_log: EventLogConfig::default(),
        log_format: LogFormat::Pretty,
        serve: ServeLimits::default(),
        key_usage_flush: Duration::from_secs(30),
    };
    let database_url = "postgres://warden:pg-pass-c3@127.0.0.1:5432/warden";
    let any_port = SocketAddr::from(([127, 0, 0, 1], 0));
    let config = StackConfig {
        ingest: ingest::Config {
            common: common.clone(),
            admin_key: "wdn_admin_stack0123456789".into(),
            bind_addr: any_port,
            ip_hash_key: "ip-hash-b2".into(),
            publish_timeout: Duration::from_secs(5),
            max_writes_in_flight: 256,
        },
        projector: projector::Config {
            common: common.clone(),
            database_url: database_url.into(),
            bind_addr: any_port,
            batch_max: 500,
            batch_wait: Duration::from_millis(20),
            stall_after: Duration::from_secs(60),
        },
        query: query_api::Config {
            common,
            admin_key: "wdn_admin_stack0123456789".into(),
            bind_addr: any_port,
            database_url: database_url.into(),
            read_database_url: Some("postgres://r:replica-pass-d4@replica/warden".into()),
            trusted_proxies: Vec::new(),
            funnel_parallelism: 2,
            max_streams_per_key: 20,
            dashboard: query_api::config::DashboardConfig {
                ip_hash_key: Some("audit-ip-e5".into()),
                ..Default::default()
            },
        },
        bind_addr: any_port,
    };
    let shown = format!("{config:?} {config:#?}");
    for secret in SECRETS {
        assert!(!shown.contains(secret), "{secret} printed in {shown}");
    }
    // Still useful to an operator: which servers were meant.
    assert!(shown.contains("postgres://warden:***@127.0.0.1:5432/warden"));
    assert!(shown.contains("nats://stack:***@127.0.0.1:4222"));
}
