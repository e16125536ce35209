//! Test harness: private nats-server processes, per-test PostgreSQL databases, and the
//! settings every test service is loaded from ([`test_vars`]).
//!
//! Both need outside programs (and [`PgCluster`], a private PostgreSQL a test may crash); `./deploy/test.sh` installs them and sets `NATS_SERVER_BIN` and
//! `TEST_DATABASE_URL` before it runs `cargo test`.

mod cluster;
mod config;
mod kv;
mod nats;
mod pg_cluster;
mod postgres;
mod projection;
mod proxy;
mod route_families;
mod webhook_receiver;

pub use cluster::NatsCluster;
pub use config::{private_event_log, test_vars};
pub use kv::erase_kv_key;
pub use nats::NatsServer;
pub use pg_cluster::PgCluster;
pub use postgres::TestDb;
pub use projection::{caught_up, wait_caught_up};
pub use proxy::CuttableProxy;
pub use route_families::check_route_families;
pub use webhook_receiver::{Received, ReceiverMode, WebhookReceiver, accepted_ids, by_webhook_id};

/// A loopback TCP port that was free a moment ago (bind 127.0.0.1:0, read the port, drop).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .expect("binding 127.0.0.1:0 must succeed on a machine that runs tests")
}

#[cfg(test)]
mod tests {
    use super::free_port;

    #[test]
    fn free_port_is_bindable() {
        let port = free_port();
        assert_ne!(port, 0);
        assert!(std::net::TcpListener::bind(("127.0.0.1", port)).is_ok());
    }
}
