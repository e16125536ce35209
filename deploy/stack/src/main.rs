//! `stack`: the whole service in one process, as `./deploy/up.sh` runs it.

use shared::shutdown::run_until_signal;
use shared::telemetry::init_tracing;
use stack::{Stack, StackConfig};
use tokio_util::sync::CancellationToken;

/// mimalloc instead of glibc's malloc: the services allocate per record (every chat line's
/// strings), and malloc/free took about 17% of ingest's CPU under the benchmark's load.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let config = StackConfig::from_env()?;
    init_tracing(config.ingest.common.log_format);
    let shutdown = CancellationToken::new();
    let stack = Stack::build(config, shutdown.clone()).await?;
    tracing::info!(base_url = %format!("http://{}", stack.local_addr()), "warden stack listening");
    let running = stack.run_until_stopped(shutdown.clone());
    run_until_signal(shutdown, running)
        .await
        .unwrap_or_else(|| Err(anyhow::anyhow!("did not stop within the shutdown deadline")))
}
