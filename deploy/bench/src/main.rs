//! `warden-bench`: measures every stage of Warden against the raw speed of JetStream and
//! PostgreSQL on the same machine, in the same run (`./deploy/bench.sh` starts the servers).
//!
//! `warden-bench run [--quick]` orchestrates; it starts each service as a child process of this
//! same binary (`warden-bench serve <service>`) so each one's peak RSS is its own.

mod alerts;
mod chain;
mod chat_search;
mod children;
mod cpu;
mod dashboard;
mod data;
mod e2e;
mod history;
mod index_cost;
mod ingest_load;
mod partitions;
mod plan;
mod player_search;
mod privacy_cost;
mod projection;
mod raw;
mod raw_insert;
mod read_phases;
mod read_set;
mod reads;
mod rebuild;
mod report;
mod retention;
mod run;
mod search_phases;
mod serve;
mod setup;
mod stats;
mod timed;
mod trends;
mod under_load;
mod verdict;
mod write_phases;

use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// mimalloc instead of glibc's malloc: the services allocate per record (every chat line's
/// strings), and malloc/free took about 17% of ingest's CPU under the benchmark's load.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(about = "Warden's benchmark harness (run it through ./deploy/bench.sh)")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Runs every measurement and writes the report.
    Run {
        /// A small version that finishes in a couple of minutes.
        #[arg(long)]
        quick: bool,
        /// Run only these phases: `writes` (ingest, projector and their baselines), `reads`
        /// (live stream, open streams, reads on the large dataset, the dashboard and sign-in)
        /// or `search` (player and chat search, the chat index's cost to the projector) or
        /// `alerts` (plugin write -> signed webhook at a local receiver) or `privacy` (durable
        /// ingest and projector catch-up with personal fields sealed, against clear, and
        /// custom events with every property sealed, one of five, and none) or
        /// `partitions` (two projector processes against one on the partitioned log, and the
        /// mixed tenant: one account's backlog while another's writes must stay readable) or
        /// `rebuild` (the backlog rebuilt beside the live projector and readers, against raw
        /// binary `COPY` of the same rows).
        /// Targets of the phases not run show as not measured.
        #[arg(long, value_enum)]
        only: Option<run::Phases>,
        /// Where the JSON report goes.
        #[arg(long, default_value = "target/bench/report.json")]
        out: PathBuf,
        /// `NATS_URL` of the private nats-server (sync_interval: always).
        #[arg(long, env = "BENCH_NATS_URL")]
        nats_url: String,
        /// Superuser URL of the private PostgreSQL, without a database name.
        #[arg(long, env = "BENCH_PG_URL")]
        pg_url: String,
    },
    /// Runs one service until SIGTERM (used by `run` for its child processes).
    Serve {
        /// `ingest`, `projector`, `query-api` or `notifier`.
        service: serve::Service,
    },
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    match cli.command {
        Command::Serve { service } => runtime.block_on(serve::serve(service)),
        Command::Run {
            quick,
            only,
            out,
            nats_url,
            pg_url,
        } => runtime.block_on(run::run(
            plan::Plan::new(quick),
            only,
            &out,
            run::Servers { nats_url, pg_url },
        )),
    }
}
