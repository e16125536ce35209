//! The ingest service: `ingest` (configuration from the environment; see `docs/configuration.md`).

use ingest::{App, Config};
use shared::shutdown::run_until_signal;
use shared::telemetry::init_tracing;
use tokio_util::sync::CancellationToken;

/// mimalloc instead of glibc's malloc: the services allocate per record (every chat line's
/// strings), and malloc/free took about 17% of ingest's CPU under the benchmark's load.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let config = Config::from_env()?;
    init_tracing(config.common.log_format);
    let shutdown = CancellationToken::new();
    let app = App::build(config, shutdown.clone()).await?;
    tracing::info!(addr = %app.local_addr(), "ingest listening");
    let running = app.run_until_stopped(shutdown.clone());
    run_until_signal(shutdown, running)
        .await
        .unwrap_or_else(|| Err(anyhow::anyhow!("did not stop within the shutdown deadline")))
}
