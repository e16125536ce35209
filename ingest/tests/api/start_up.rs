//! Start-up through `shared::nats`: a failed connection names the server without its password.

use crate::helpers::config;
use shared::event_log::EventLogConfig;
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn a_failed_connection_names_the_server_without_its_password() {
    // A port nothing listens on: bind one, then free it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("free port")
        .port();
    let url = format!("nats://warden:nats-pass-8675309@127.0.0.1:{port}");
    let config = config(url, EventLogConfig::default(), "wdn_admin_start_up");

    let error = ingest::App::build(config, CancellationToken::new())
        .await
        .err()
        .expect("no server answers");
    let message = format!("{error:#} {error:?}");
    assert!(
        message.contains(&format!("nats://warden:***@127.0.0.1:{port}")),
        "{message}"
    );
    assert!(!message.contains("nats-pass-8675309"), "{message}");
}
