//! The projector binary: `run` (default) consumes the event log; `migrate` applies the schema;
//! `rebuild` replays the log into fresh tables and swaps them in; `parked` lists and re-applies
//! parked messages; `notify` runs the notifier (alert rules and webhook delivery).

use anyhow::Context;
use clap::{Parser, Subcommand};
use projector::alerts::{NotifierApp, NotifierConfig};
use projector::parked::{self, Retried, Selection};
use projector::projections::{self, ReadModel};
use projector::rebuild::{RebuildOptions, rebuild};
use projector::{App, Config};
use shared::config::Vars;
use tokio_util::sync::CancellationToken;

/// mimalloc instead of glibc's malloc: the services allocate per record (every chat line's
/// strings), and malloc/free took about 17% of ingest's CPU under the benchmark's load.
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
    /// Run the notifier until SIGINT/SIGTERM: evaluate the alert rules against the event log
    /// and deliver the notifications to webhooks and Discord.
    Notify,
    /// Replay the event log into fresh tables and swap them in, while the live projector runs.
    Rebuild {
        /// Rebuild only this read model (repeatable); every read model when absent.
        #[arg(long = "model", value_name = "NAME", value_parser = parse_model)]
        models: Vec<&'static dyn ReadModel>,
        /// Log progress instead of drawing a progress bar.
        #[arg(long)]
        no_progress: bool,
    },
    /// List or re-apply the log messages set aside in `parked_messages` (needs `DATABASE_URL`;
    /// a retry also needs `NATS_URL` and `PRIVACY_MASTER_KEY` to open the payloads).
    Parked {
        #[command(subcommand)]
        action: ParkedCommand,
    },
}

#[derive(Subcommand)]
enum ParkedCommand {
    /// Print every parked message: sequence, time, the read model that parked it (`*`: every
    /// model), SQLSTATE, subject and reason; one line per read model that parked it.
    List,
    /// Re-apply parked messages after a fix, in log order, one transaction each, to the read
    /// models that parked them only; a message applied is removed, one still refused stays
    /// parked (for the models that still refuse it) with its new reason.
    Retry {
        /// The parked message at this stream sequence.
        #[arg(
            long,
            value_name = "N",
            required_unless_present = "all",
            conflicts_with = "all"
        )]
        sequence: Option<u64>,
        /// Every parked message.
        #[arg(long)]
        all: bool,
    },
}

fn parse_model(name: &str) -> Result<&'static dyn ReadModel, String> {
    projections::by_name(name).ok_or_else(|| {
        let known: Vec<&str> = projections::READ_MODELS.iter().map(|m| m.name()).collect();
        format!("unknown read model '{name}' (one of: {})", known.join(", "))
    })
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    match Cli::parse().command.unwrap_or(Command::Run) {
        Command::Migrate => {
            let database_url = database_url_with_tracing()?;
            projector::migrate(&database_url).await?;
            tracing::info!("migrations applied");
            Ok(())
        }
        Command::Run => run().await,
        Command::Notify => notify().await,
        Command::Parked { action } => parked_command(action).await,
        Command::Rebuild {
            models,
            no_progress,
        } => {
            let config = Config::from_env()?;
            shared::telemetry::init_tracing(config.common.log_format);
            let options = RebuildOptions {
                models,
                progress_bar: !no_progress,
                progress: None,
            };
            let shutdown = CancellationToken::new();
            let rebuilding = rebuild(&config, &options, shutdown.clone());
            let report = shared::shutdown::run_until_signal(shutdown, rebuilding)
                .await
                .context("the rebuild did not stop within the shutdown deadline")??;
            let seconds = report.elapsed.as_secs_f64();
            tracing::info!(
                models = ?report.models.iter().map(|m| m.name()).collect::<Vec<_>>(),
                last_sequence = report.last_sequence,
                records = report.records,
                records_per_second = (report.records as f64 / seconds.max(0.001)).round() as u64,
                elapsed_s = seconds,
                phases_s = ?report
                    .phases
                    .iter()
                    .map(|(phase, took)| format!("{phase}={:.1}", took.as_secs_f64()))
                    .collect::<Vec<_>>(),
                swap_ms = report.swap.as_millis() as u64,
                transactions = ?report
                    .transactions
                    .iter()
                    .map(|t| format!("{}={}/{}", t.model, t.transactions, t.chunks))
                    .collect::<Vec<_>>(),
                "rebuild finished"
            );
            Ok(())
        }
    }
}

/// For the commands that need only the database: starts tracing (`LOG_FORMAT`) and reads
/// `DATABASE_URL`.
fn database_url_with_tracing() -> anyhow::Result<String> {
    let vars = Vars::process();
    let format = vars.or_default("LOG_FORMAT", "pretty".to_owned())?;
    shared::telemetry::init_tracing(shared::telemetry::LogFormat::parse(&format));
    Ok(vars.required("DATABASE_URL")?)
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

async fn notify() -> anyhow::Result<()> {
    let config = NotifierConfig::from_env()?;
    shared::telemetry::init_tracing(config.common.log_format);
    let app = NotifierApp::build(config).await?;
    tracing::info!(ops = %app.local_addr(), "notifier started");

    let shutdown = CancellationToken::new();
    let running = app.run_until_stopped(shutdown.clone());
    shared::shutdown::run_until_signal(shutdown, running)
        .await
        .context("the notifier did not stop within the shutdown deadline")?
}

/// The keyring a parked retry opens the stored payloads with, and the stream's subjects (which
/// name each message's partition): the retry reads `NATS_URL`, the event log settings and
/// `PRIVACY_MASTER_KEY` like `run` does.
async fn retry_keyring() -> anyhow::Result<(shared::privacy::Keyring, shared::subjects::Subjects)> {
    let config = Config::from_env()?;
    let nats = shared::nats::connect("warden-projector-parked", &config.common.nats_url).await?;
    let js = async_nats::jetstream::new(nats.client);
    let log = &config.common.event_log;
    let stream = shared::nats::existing_event_stream(&js, log).await?;
    Ok((config.privacy.keyring(&js, log).await?, stream.subjects))
}

async fn parked_command(action: ParkedCommand) -> anyhow::Result<()> {
    let database_url = database_url_with_tracing()?;
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(1)
        .connect(&database_url)
        .await
        .context("connecting to PostgreSQL (DATABASE_URL)")?;
    projector::MIGRATOR
        .run(&pool)
        .await
        .context("applying migrations")?;
    match action {
        ParkedCommand::List => {
            for m in parked::list(&pool).await? {
                println!(
                    "{}\t{}\t{}\t{}\t{}\t{} bytes\t{}",
                    m.stream_sequence,
                    m.parked_at.to_rfc3339(),
                    m.projection,
                    m.sqlstate.as_deref().unwrap_or("-"),
                    m.subject,
                    m.payload_bytes,
                    m.reason
                );
            }
            Ok(())
        }
        ParkedCommand::Retry { sequence, all } => {
            let selection = match (sequence, all) {
                (Some(sequence), false) => Selection::One(sequence),
                _ => Selection::All,
            };
            let (keyring, subjects) = retry_keyring().await?;
            let results = parked::retry(&pool, &keyring, &subjects, selection).await?;
            let mut left = 0;
            for (sequence, retried) in &results {
                let outcome = match retried {
                    Retried::Applied => "applied".to_owned(),
                    Retried::StillRefused(reason) => format!("still parked: {reason}"),
                    Retried::Unreadable(reason) => format!("still parked: {reason}"),
                    Retried::NotParked => "not parked".to_owned(),
                };
                left += usize::from(!matches!(retried, Retried::Applied));
                println!("{sequence}\t{outcome}");
            }
            anyhow::ensure!(
                left == 0,
                "{left} of {} messages were not applied",
                results.len()
            );
            Ok(())
        }
    }
}
