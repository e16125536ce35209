//! The projector binary: `run` (default) consumes the event log; `migrate` applies the schema;
//! `rebuild` replays the log into fresh tables and swaps them in.

use anyhow::Context;
use clap::{Parser, Subcommand};
use projector::projections::ReadModel;
use projector::rebuild::{RebuildOptions, rebuild};
use projector::{App, Config};
use tokio_util::sync::CancellationToken;

/// mimalloc instead of glibc's malloc: the services allocate per record (every chat line's
/// strings), and malloc/free took about 17% of ingest's CPU under load (README, Benchmarks).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
    /// Replay the event log into fresh tables and swap them in, while the live projector runs.
    Rebuild {
        /// Rebuild only this read model (repeatable); every read model when absent.
        #[arg(long = "model", value_name = "NAME", value_parser = parse_model)]
        models: Vec<ReadModel>,
        /// Log progress instead of drawing a progress bar.
        #[arg(long)]
        no_progress: bool,
    },
}

fn parse_model(name: &str) -> Result<ReadModel, String> {
    ReadModel::parse(name).ok_or_else(|| {
        let known: Vec<&str> = ReadModel::ALL.iter().map(|m| m.name()).collect();
        format!("unknown read model '{name}' (one of: {})", known.join(", "))
    })
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
        Command::Rebuild {
            models,
            no_progress,
        } => {
            let config = Config::from_env()?;
            shared::telemetry::init_tracing(config.common.log_format);
            let options = RebuildOptions {
                models,
                progress_bar: !no_progress,
            };
            let shutdown = CancellationToken::new();
            let rebuilding = rebuild(&config, &options, shutdown.clone());
            let report = shared::shutdown::run_until_signal(shutdown, rebuilding)
                .await
                .context("the rebuild did not stop within the shutdown deadline")??;
            tracing::info!(
                models = ?report.models.iter().map(|m| m.name()).collect::<Vec<_>>(),
                last_sequence = report.last_sequence,
                elapsed_s = report.elapsed.as_secs_f64(),
                swap_ms = report.swap.as_millis() as u64,
                "rebuild finished"
            );
            Ok(())
        }
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
