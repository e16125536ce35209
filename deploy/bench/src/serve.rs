//! `warden-bench serve <service>`: one service as its own process, built exactly as its own
//! binary builds it (configuration from the environment).

use shared::shutdown::run_until_signal;
use shared::telemetry::init_tracing;
use tokio_util::sync::CancellationToken;

/// A Warden service the bench can run as a child process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Service {
    /// Plugin writes.
    Ingest,
    /// The event-log consumer.
    Projector,
    /// Reads, the live stream, funnels and the admin API.
    QueryApi,
    /// Alert rules and webhook delivery (`projector notify`).
    Notifier,
}

impl Service {
    /// The name on the command line and in the report.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Service::Ingest => "ingest",
            Service::Projector => "projector",
            Service::QueryApi => "query-api",
            Service::Notifier => "notifier",
        }
    }
}

/// Runs `service` until SIGTERM or Ctrl-C.
pub(crate) async fn serve(service: Service) -> anyhow::Result<()> {
    let shutdown = CancellationToken::new();
    let running: std::pin::Pin<Box<dyn Future<Output = anyhow::Result<()>> + Send>> = match service
    {
        Service::Ingest => {
            let config = ingest::Config::from_env()?;
            init_tracing(config.common.log_format);
            let app = ingest::App::build(config, shutdown.clone()).await?;
            Box::pin(app.run_until_stopped(shutdown.clone()))
        }
        Service::Projector => {
            let config = projector::Config::from_env()?;
            init_tracing(config.common.log_format);
            let app = projector::App::build(config).await?;
            Box::pin(app.run_until_stopped(shutdown.clone()))
        }
        Service::QueryApi => {
            let config = query_api::Config::from_env()?;
            init_tracing(config.common.log_format);
            let app = query_api::App::build(config, shutdown.clone()).await?;
            Box::pin(app.run_until_stopped(shutdown.clone()))
        }
        Service::Notifier => {
            let config = projector::alerts::NotifierConfig::from_env()?;
            init_tracing(config.common.log_format);
            let app = projector::alerts::NotifierApp::build(config).await?;
            Box::pin(app.run_until_stopped(shutdown.clone()))
        }
    };
    run_until_signal(shutdown, running)
        .await
        .unwrap_or_else(|| Err(anyhow::anyhow!("did not stop within the shutdown deadline")))
}
