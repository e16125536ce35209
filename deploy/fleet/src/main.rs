//! `demo-fleet`: simulated game servers writing to the plugin API until Ctrl-C.

use clap::Parser;
use demo_fleet::Config;
use shared::telemetry::{LogFormat, init_tracing};
use tokio_util::sync::CancellationToken;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let config = Config::parse();
    init_tracing(LogFormat::Pretty);
    let shutdown = CancellationToken::new();
    tokio::spawn(shared::shutdown::cancel_on_signal(shutdown.clone()));
    let totals = demo_fleet::run(config, shutdown).await?;
    if !totals.clean() {
        anyhow::bail!(
            "{} requests failed and {} records were rejected",
            totals.failed_requests,
            totals.rejected
        );
    }
    Ok(())
}
