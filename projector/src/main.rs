//! The projector binary: `run` (default) consumes the event log; `migrate` applies the schema.

use anyhow::Context;
use clap::{Parser, Subcommand};
use projector::{App, Config};
use tokio_util::sync::CancellationToken;

#[derive(Parser)]
#[command(about = "Folds the Warden event log into PostgreSQL read models")]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Consume the event log until SIGINT/SIGTERM (the default).
    Run,
    /// Apply the database migrations and exit.
    Migrate,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    match Cli::parse().command.unwrap_or(Command::Run) {
        Command::Migrate => {
            let format = shared::config::or_default("LOG_FORMAT", "pretty".to_owned())?;
            shared::telemetry::init_tracing(shared::telemetry::LogFormat::parse(&format));
            let database_url = shared::config::required("DATABASE_URL")?;
            projector::migrate(&database_url).await?;
            tracing::info!("migrations applied");
            Ok(())
        }
        Command::Run => run().await,
    }
}

async fn run() -> anyhow::Result<()> {
    let config = Config::from_env()?;
    shared::telemetry::init_tracing(config.common.log_format);
    let app = App::build(config).await?;
    tracing::info!(ops = %app.local_addr(), "projector started");

    let shutdown = CancellationToken::new();
    let running = app.run_until_stopped(shutdown.clone());
    shared::shutdown::run_until_signal(shutdown, running)
        .await
        .context("the projector did not stop within the shutdown deadline")?
}
