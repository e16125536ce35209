//! The projector binary: `run` (default) consumes the event log; `migrate` applies the schema.

use anyhow::Context;
use clap::{Parser, Subcommand};
use projector::{App, Config};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How long a graceful shutdown may take before the process exits anyway.
const SHUTDOWN_DEADLINE: Duration = Duration::from_secs(10);

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
    tokio::pin!(running);
    tokio::select! {
        result = &mut running => return result,
        () = shutdown_signal() => tracing::info!("shutting down"),
    }
    shutdown.cancel();
    tokio::time::timeout(SHUTDOWN_DEADLINE, running)
        .await
        .context("the projector did not stop within the shutdown deadline")?
}

async fn shutdown_signal() {
    let interrupt = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        () = interrupt => {},
        () = terminate => {},
    }
}
