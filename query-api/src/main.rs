//! The query-api binary: serve HTTP, or manage accounts and keys from the command line.

use clap::Parser;
use query_api::cli::{self, Cli, Command};
use query_api::{App, Config};
use tokio_util::sync::CancellationToken;

/// mimalloc instead of glibc's malloc: the services allocate per record (every chat line's
/// strings), and malloc/free took about 17% of ingest's CPU under the benchmark's load.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    match Cli::parse().command.unwrap_or(Command::Serve) {
        Command::Serve => serve().await,
        command => cli::run(command).await,
    }
}

async fn serve() -> anyhow::Result<()> {
    let config = Config::from_env()?;
    shared::telemetry::init_tracing(config.common.log_format);
    let shutdown = CancellationToken::new();
    let app = App::build(config, shutdown.clone()).await?;
    tracing::info!(addr = %app.local_addr(), "query-api listening");
    let running = app.run_until_stopped(shutdown.clone());
    shared::shutdown::run_until_signal(shutdown, running)
        .await
        .unwrap_or_else(|| Err(anyhow::anyhow!("did not stop within the shutdown deadline")))
}
