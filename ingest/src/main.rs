//! The ingest service: `ingest` (configuration from the environment; see README).

use ingest::{App, Config};
use shared::shutdown::cancel_on_signal;
use shared::telemetry::init_tracing;
use tokio_util::sync::CancellationToken;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let config = Config::from_env()?;
    init_tracing(config.common.log_format);
    let shutdown = CancellationToken::new();
    let app = App::build(config, shutdown.clone()).await?;
    tracing::info!(addr = %app.local_addr(), "ingest listening");
    tokio::spawn(cancel_on_signal(shutdown.clone()));
    app.run_until_stopped(shutdown).await
}
