//! `projector rebuild`: replays the event log from the start into a fresh copy of the read
//! models' tables while the live projector keeps serving, then swaps the copy in.
//!
//! 1. A PostgreSQL advisory lock ([`LOCK_KEY`]) makes rebuilds one at a time: a second one is
//!    refused at once with [`RebuildError::AlreadyRunning`].
//! 2. Load: the copy is filled per partition of the log ([`shared::subjects`]): each partition has
//!    its own consumer from the first message ([`partition`]) and its own checkpoints in
//!    the copy, and the partitions replay concurrently, by the same path as the live projector
//!    (each model in its own transaction: [`projections::Applier`]), with at most
//!    `PROJECTOR_APPLY_CONCURRENCY` model transactions, and as many partitions applying a chunk, at
//!    once ([`replay::partitions_at_once`]). Within a partition the models are pipelined
//!    ([`pipeline`]): each moves on to the next chunk once it has committed one, on chunks of up
//!    to `PROJECTOR_REBUILD_CHUNK_MESSAGES` messages ([`pipeline::Chunking`]), and a model behind
//!    the others applies the chunks waiting for it in one transaction. The copy lives in its
//!    own schema ([`copy`]), so reads of the live tables never see it. Personal fields are opened with the keys as they are now:
//!    what was erased, or left retention, replays as erased. The copy loads in bulk mode: unlogged,
//!    without the indexes no fold reads through, on connections that commit asynchronously
//!    ([`copy`]), and the folds that have one store their append-only rows with a binary `COPY`
//!    ([`ReadModel::apply_bulk`]). The players fold keeps its rows in memory between chunks and
//!    leaves most of its writes (rows and name spans) for the load's end
//!    ([`projections::BulkState`]): until then its tables are not counted as loaded.
//! 3. Index build: first the rows the load left to write are written (one transaction,
//!    [`Replay::write_kept`](replay::Replay::write_kept)); the copy's tables are made logged,
//!    its other indexes are built under the live names, and statistics gathered
//!    ([`indexes`]). It starts during the load, one statement at a time, with the tables of the
//!    models that have loaded everything ([`loaded`]), and goes on with every table, two
//!    statements at a time, once every partition of the copy has reached the live checkpoints
//!    and the replay has paused (the index build phase).
//! 4. Catch-up: the replay resumes, now indexed, until the copy reaches the live checkpoints again,
//!    and the copy is swept for retention as the live tables are.
//! 5. Swap: once every partition of the copy has reached its live checkpoints again (an idle
//!    partition's may stand past its last message, at the stream's end: [`partition::cover_idle`]),
//!    one transaction ([`swap`]) takes the models' rows of `projection_checkpoints` in every
//!    partition `FOR UPDATE` (the lock every live model's transaction takes first, so the live
//!    projector pauses those models between two chunks), applies to each partition of the copy the
//!    last few messages the live projector committed meanwhile, takes `ACCESS EXCLUSIVE` locks on
//!    the live tables, moves them out and the copy in, and sets each partition's checkpoints to
//!    where that partition of the copy stands. Readers wait for that transaction (milliseconds)
//!    instead of failing, and resolve the table names again afterwards. The live projector's next
//!    chunk of each partition reads the moved checkpoints and skips, per model, what the copy
//!    already holds. A failure or an interruption before the commit leaves the live tables and
//!    checkpoints as they were. A swap that waits too long for its locks goes back to the catch-up.
//!
//! Each change of phase is logged (`rebuild phase`) and sent on
//! [`RebuildOptions::progress`] at once; see [`progress`].

mod copy;
mod deferred;
mod index_jobs;
mod index_plan;
mod indexes;
mod loaded;
mod partition;
mod pipeline;
mod progress;
mod replay;
mod stages;
mod swap;

use crate::checkpoint;
use crate::config::Config;
use crate::error::ProjectorError;
use crate::projections::{self, ReadModel};
use crate::read_ahead::ReadAhead;
use anyhow::Context;
use copy::TableCopy;
use partition::PartitionReplay;
use progress::Tracker;
pub use progress::{ModelTransactions, Phase, Progress};
use replay::Replay;
use shared::privacy::Keyring;
use sqlx::postgres::PgPoolOptions;
use sqlx::{Connection, PgConnection, PgPool};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// The advisory lock a running rebuild holds (ASCII "WRDNRBLD").
pub const LOCK_KEY: i64 = 0x5752_444E_5242_4C44;
/// How often the replay checks whether it has caught up with the live projector.
const CATCH_UP_CHECK: Duration = Duration::from_millis(200);

/// Why a rebuild did not start.
#[derive(Debug, thiserror::Error)]
pub enum RebuildError {
    /// Another rebuild holds the lock.
    #[error(
        "another rebuild is already running on this database (it holds PostgreSQL advisory \
         lock {LOCK_KEY}); wait for it to finish, then run this one again"
    )]
    AlreadyRunning,
}

/// What to rebuild, and how to show progress.
#[derive(Debug, Clone, Default)]
pub struct RebuildOptions {
    /// The read models to rebuild; every one when empty.
    pub models: Vec<&'static dyn ReadModel>,
    /// Draw a progress bar on stderr (when it is a terminal; progress is logged otherwise).
    pub progress_bar: bool,
    /// Also sent every change of [`Progress`] (the benchmark and the tests watch it).
    pub progress: Option<tokio::sync::watch::Sender<Progress>>,
}

/// What a finished rebuild did.
#[derive(Debug, Clone)]
pub struct RebuildReport {
    /// The read models swapped in.
    pub models: Vec<&'static dyn ReadModel>,
    /// The highest stream sequence the swapped-in tables hold (of any partition).
    pub last_sequence: u64,
    /// Where the swapped-in tables stand in each partition of the log (its checkpoints), by
    /// partition.
    pub positions: Vec<u64>,
    /// How long the whole rebuild took.
    pub elapsed: Duration,
    /// How long the swap transaction held its locks.
    pub swap: Duration,
    /// The records applied to the copy (what the load and the catch-up replayed).
    pub records: u64,
    /// How long each phase took, in the order they ran (a phase run again, the catch-up and
    /// the swap after a swap that timed out, adds up).
    pub phases: Vec<(Phase, Duration)>,
    /// Each model's transactions on the copy and the chunks they applied.
    pub transactions: Vec<ModelTransactions>,
    /// The most players rows, and the most name spans, the load kept in memory at once
    /// (bounded by `PROJECTOR_REBUILD_KEPT_PLAYERS`).
    pub kept_peaks: (usize, usize),
}

/// Rebuilds `options.models` from the start of the event log and swaps them in (see the
/// module docs); on failure or `shutdown` the live tables are left as they were.
pub async fn rebuild(
    config: &Config,
    options: &RebuildOptions,
    shutdown: CancellationToken,
) -> anyhow::Result<RebuildReport> {
    let tracker = Tracker::new(options.progress_bar, options.progress.clone());
    let told = CancellationToken::new();
    let (report, ()) = tokio::join!(
        async {
            let report = run(config, options, &tracker, shutdown).await;
            told.cancel();
            report
        },
        tracker.run(&told)
    );
    report
}

/// The rebuild, followed by `tracker`.
async fn run(
    config: &Config,
    options: &RebuildOptions,
    tracker: &Tracker,
    shutdown: CancellationToken,
) -> anyhow::Result<RebuildReport> {
    let started = Instant::now();
    let models: Vec<&'static dyn ReadModel> = projections::READ_MODELS
        .iter()
        .copied()
        .filter(|m| options.models.is_empty() || options.models.contains(m))
        .collect();
    // Held for the whole rebuild; the lock ends with this connection's session, even on a
    // crash.
    let mut guard = PgConnection::connect(&config.database_url)
        .await
        .context("connecting to PostgreSQL (DATABASE_URL)")?;
    let locked: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock($1)")
        .bind(LOCK_KEY)
        .fetch_one(&mut guard)
        .await?;
    if !locked {
        return Err(RebuildError::AlreadyRunning.into());
    }
    let pool = PgPoolOptions::new()
        .max_connections(2)
        .connect(&config.database_url)
        .await?;
    crate::MIGRATOR
        .run(&pool)
        .await
        .context("applying migrations")?;
    let partitions = open_log(config).await?.0.subjects.partitions();
    checkpoint::ensure(&pool, &projections::names_of(&models), partitions).await?;
    copy::drop_leftovers(&pool).await?;
    let copy = TableCopy::create(&pool, &models, partitions).await?;
    let deferred: Vec<&str> = copy.deferred.iter().map(|d| d.name.as_str()).collect();
    tracing::info!(
        schema = %copy.schema,
        models = ?names(&models),
        partitions,
        deferred_indexes = ?deferred,
        "rebuilding"
    );

    let result = replay_and_swap(config, &models, &pool, &copy, tracker, &shutdown).await;
    if let Err(error) = copy.drop(&pool).await {
        tracing::warn!(%error, schema = %copy.schema, "could not drop the rebuild's schemas");
    }
    let (positions, swap, kept_peaks) = result?;
    guard.close().await?;
    Ok(RebuildReport {
        models,
        last_sequence: positions.iter().copied().max().unwrap_or(0),
        positions,
        elapsed: started.elapsed(),
        swap,
        records: tracker.records(),
        phases: tracker.took(),
        transactions: tracker.transactions(),
        kept_peaks,
    })
}

/// Loads the copy from every partition of the log at once, builds its indexes, catches up
/// and swaps it in; returns where each partition of it stands, the swap's duration and the
/// most the players fold kept in memory at once (rows, name spans).
async fn replay_and_swap(
    config: &Config,
    models: &[&'static dyn ReadModel],
    pool: &PgPool,
    copy: &TableCopy,
    tracker: &Tracker,
    shutdown: &CancellationToken,
) -> anyhow::Result<(Vec<u64>, Duration, (usize, usize))> {
    let (shared::nats::EventStream { stream, subjects }, keyring, read_ahead) =
        open_log(config).await?;
    let connections = replay::pool_size(config.apply_concurrency, subjects.partitions());
    let copy_pool = copy.connect(&config.database_url, connections).await?;
    // Keys destroyed while the replay runs (an erasure, the retention sweep) leave its cache
    // at once: the copy never brings back what the live tables lost meanwhile.
    let keys_watched = shutdown.child_token();
    let _watch = keyring.spawn_watch(keys_watched.clone());
    let _stop_keys = keys_watched.drop_guard();
    let mut partitions = Vec::with_capacity(usize::from(subjects.partitions()));
    for partition in 0..subjects.partitions() {
        partitions
            .push(PartitionReplay::open(&stream, &subjects, partition, config, read_ahead).await?);
    }
    let replay = Replay::new(
        &copy_pool,
        &keyring,
        models,
        &subjects,
        config.apply_concurrency,
        config.rebuild_kept_players,
        tracker,
    );
    let names = projections::names_of(models);
    tracker.enter(Phase::Load);
    let load_ended = CancellationToken::new();
    let beside = indexes::Beside {
        ended: &load_ended,
        replay: &replay,
        models,
    };
    // The index build starts during the load, with the tables loaded first.
    tokio::try_join!(
        async {
            fill(&replay, &mut partitions, &stream, pool, &names, shutdown).await?;
            tracker.enter(Phase::IndexBuild);
            // Before any statement of the index build on the tables missing those rows.
            replay.write_kept().await?;
            load_ended.cancel();
            anyhow::Ok(())
        },
        indexes::or_stop(
            shutdown,
            indexes::build(copy, &config.database_url, pool, tracker, beside),
        )
    )?;
    loop {
        tracker.enter(Phase::CatchUp);
        fill(&replay, &mut partitions, &stream, pool, &names, shutdown).await?;
        // The copy swaps in nothing past retention: the same sweep as the live
        // projector's, on the copy's tables (its pool resolves them to the copy).
        let tables: Vec<&str> = models.iter().flat_map(|m| m.tables()).copied().collect();
        crate::retention::sweep_tables(&copy_pool, &keyring, chrono::Utc::now(), &tables)
            .await
            .context("sweeping the copy for retention")?;
        tracker.enter(Phase::Swap);
        let swap_started = Instant::now();
        match swap::swap(pool, copy, &names, &replay, &mut partitions, &stream).await {
            Ok(()) => {
                let swap = swap_started.elapsed();
                let positions = replay.positions();
                tracing::info!(
                    positions = ?positions,
                    swap_ms = swap.as_millis() as u64,
                    "rebuilt tables swapped in"
                );
                tracker.enter(Phase::Done);
                return Ok((positions, swap, replay.kept_peaks()));
            }
            Err(error) if is_lock_timeout(&error) => {
                tracing::warn!("the swap waited too long for its locks; trying again");
            }
            Err(error) => return Err(error),
        }
    }
}

/// Fills the copy from every partition until each has reached its live checkpoints, then
/// pauses the partitions' readers.
async fn fill(
    replay: &Replay<'_>,
    partitions: &mut [PartitionReplay],
    stream: &async_nats::jetstream::stream::Stream,
    pool: &PgPool,
    names: &[&'static str],
    shutdown: &CancellationToken,
) -> anyhow::Result<()> {
    let pause = CancellationToken::new();
    let fills = futures::future::try_join_all(
        partitions
            .iter_mut()
            .map(|reader| reader.fill(replay, &pause)),
    );
    let watched = watch(replay, stream, pool, names, &pause);
    // The select only picks what happens next; the work happens outside it. An
    // interruption wins over a copy caught up.
    tokio::select! {
        biased;
        () = shutdown.cancelled() => anyhow::bail!("the rebuild was interrupted"),
        filled = async { tokio::try_join!(fills, watched) } => { filled?; }
    }
    Ok(())
}

/// Looks at the stream's size (for progress) until every partition of the copy has reached
/// the live checkpoints of its partition, then pauses the replay (`pause`).
async fn watch(
    replay: &Replay<'_>,
    stream: &async_nats::jetstream::stream::Stream,
    pool: &PgPool,
    names: &[&'static str],
    pause: &CancellationToken,
) -> anyhow::Result<()> {
    let mut check = tokio::time::interval(CATCH_UP_CHECK);
    loop {
        check.tick().await;
        // Read before the partitions' last messages (see `partition::cover_idle`).
        let info = stream
            .clone()
            .get_info()
            .await
            .map_err(ProjectorError::event_log)?;
        let end = info.state.last_sequence;
        replay.tracker.stream_bytes(info.state.bytes);
        let live = swap::live_positions(pool, names).await?;
        for (partition, at) in &live {
            // A partition still reading its backlog is not asked where it ends.
            if replay.position(*partition) < *at && replay.drained(*partition) {
                partition::cover_idle(replay, stream, *partition, end).await?;
            }
        }
        if replay.caught_up(&live) {
            pause.cancel();
            return Ok(());
        }
    }
}

/// The event stream, the keyring that opens its personal fields, and how far its readers
/// read ahead.
async fn open_log(
    config: &Config,
) -> anyhow::Result<(shared::nats::EventStream, Keyring, ReadAhead)> {
    let nats = shared::nats::connect("warden-projector-rebuild", &config.common.nats_url).await?;
    let read_ahead = ReadAhead {
        messages: config.batch_max,
        bytes: config.read_ahead_bytes,
    }
    .fitting(nats.client.server_info().max_payload);
    let js = async_nats::jetstream::new(nats.client);
    let event_log = &config.common.event_log;
    let stream = shared::nats::existing_event_stream(&js, event_log).await?;
    let keyring = config.privacy.keyring(&js, event_log).await?;
    Ok((stream, keyring, read_ahead))
}

fn is_lock_timeout(error: &anyhow::Error) -> bool {
    let code = |e: &sqlx::Error| match e {
        sqlx::Error::Database(db) => db.code().is_some_and(|c| c == "55P03"),
        _ => false,
    };
    error.chain().any(|cause| {
        cause.downcast_ref::<sqlx::Error>().is_some_and(code)
            || matches!(cause.downcast_ref::<ProjectorError>(), Some(ProjectorError::Database(e)) if code(e))
    })
}

fn names(models: &[&'static dyn ReadModel]) -> Vec<&'static str> {
    projections::names_of(models)
}
