//! `stack`: the whole service in one process, as `./deploy/up.sh` runs it.

use shared::shutdown::cancel_on_signal;
use shared::telemetry::init_tracing;
use stack::{Stack, StackConfig};
use tokio_util::sync::CancellationToken;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let config = StackConfig::from_env()?;
    init_tracing(config.ingest.common.log_format);
    let shutdown = CancellationToken::new();
    let stack = Stack::build(config, shutdown.clone()).await?;
    tracing::info!(base_url = %format!("http://{}", stack.local_addr()), "warden stack listening");
    tokio::spawn(cancel_on_signal(shutdown.clone()));
    stack.run_until_stopped(shutdown).await
}
