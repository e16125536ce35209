//! `projector rebuild`: replays the event log from the start into a fresh copy of the read
//! models' tables while the live projector keeps serving, then swaps the copy in.
//!
//! 1. A PostgreSQL advisory lock ([`LOCK_KEY`]) makes rebuilds one at a time: a second one is
//!    refused at once with [`RebuildError::AlreadyRunning`].
//! 2. The copy is filled by the same path as the live projector (each model in its own
//!    transaction, concurrently: [`projections::Applier`]), in its own schema with its own
//!    checkpoints ([`copy`]), so reads of the live tables never see it.
//!    Personal fields are opened with the keys as they are now: what was erased, or left
//!    retention, replays as erased.
//! 3. Once the copy has reached the live checkpoint, one transaction takes the models' rows of
//!    `projection_checkpoints` `FOR UPDATE` — the lock every live model's transaction takes
//!    first, so the live projector pauses those models between two chunks — applies the last few messages the live
//!    projector committed meanwhile, takes `ACCESS EXCLUSIVE` locks on the live tables, moves
//!    them out and the copy in, and sets the models' checkpoints to the copy's position.
//!    Readers wait for that transaction (milliseconds) instead of failing, and resolve the
//!    table names again afterwards. The live projector's next chunk reads the moved
//!    checkpoints and skips, per model, what the copy already holds.

mod copy;
mod replay;

use crate::checkpoint;
use crate::config::Config;
use crate::error::ProjectorError;
use crate::projections::{self, ReadModel};
use anyhow::Context;
use async_nats::jetstream::consumer::DeliverPolicy;
use async_nats::jetstream::consumer::pull::OrderedConfig;
use copy::TableCopy;
use futures::{Stream, StreamExt};
use replay::{Chunk, Replay, progress_bar};
use shared::privacy::Keyring;
use sqlx::postgres::PgPoolOptions;
use sqlx::{Connection, Executor, PgConnection, PgPool};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// The advisory lock a running rebuild holds (ASCII "WRDNRBLD").
pub const LOCK_KEY: i64 = 0x5752_444E_5242_4C44;
/// How often the replay checks whether it has caught up with the live projector.
const CATCH_UP_CHECK: Duration = Duration::from_millis(200);
/// How long the swap may wait for the live projector's last chunk and the readers.
const SWAP_LOCK_TIMEOUT: &str = "5s";
/// How long the swap may spend applying what the live projector committed meanwhile.
const SWAP_CATCH_UP: Duration = Duration::from_secs(10);

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
}

/// What a finished rebuild did.
#[derive(Debug, Clone)]
pub struct RebuildReport {
    /// The read models swapped in.
    pub models: Vec<&'static dyn ReadModel>,
    /// The stream sequence the swapped-in tables stand at.
    pub last_sequence: u64,
    /// How long the whole rebuild took.
    pub elapsed: Duration,
    /// How long the swap transaction held its locks.
    pub swap: Duration,
}

/// Rebuilds `options.models` from the start of the event log and swaps them in (see the
/// module docs); on failure or `shutdown` the live tables are left as they were.
pub async fn rebuild(
    config: &Config,
    options: &RebuildOptions,
    shutdown: CancellationToken,
) -> anyhow::Result<RebuildReport> {
    let started = Instant::now();
    let models: Vec<&'static dyn ReadModel> = projections::READ_MODELS
        .iter()
        .copied()
        .filter(|m| options.models.is_empty() || options.models.contains(m))
        .collect();
    // Held for the whole rebuild; the lock ends with this session, even on a crash.
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
    let copy = TableCopy::create(&pool, &models).await?;
    tracing::info!(schema = %copy.schema, models = ?names(&models), "rebuilding");

    let result = replay_and_swap(config, options, &models, &pool, &copy, &shutdown).await;
    if let Err(error) = copy.drop(&pool).await {
        tracing::warn!(%error, schema = %copy.schema, "could not drop the rebuild's schemas");
    }
    let (last_sequence, swap) = result?;
    guard.close().await?;
    Ok(RebuildReport {
        models,
        last_sequence,
        elapsed: started.elapsed(),
        swap,
    })
}

/// Fills the copy from the log and swaps it in; returns its position and the swap's duration.
async fn replay_and_swap(
    config: &Config,
    options: &RebuildOptions,
    models: &[&'static dyn ReadModel],
    pool: &PgPool,
    copy: &TableCopy,
    shutdown: &CancellationToken,
) -> anyhow::Result<(u64, Duration)> {
    let copy_pool = copy
        .connect(&config.database_url, config.apply_concurrency)
        .await?;
    let (shared::nats::EventStream { stream, subjects }, keyring) = open_log(config).await?;
    // Keys destroyed while the replay runs (an erasure, the retention sweep) leave its cache
    // at once: the copy never brings back what the live tables lost meanwhile.
    let keys_watched = shutdown.child_token();
    let _watch = keyring.spawn_watch(keys_watched.clone());
    let _stop_keys = keys_watched.drop_guard();
    let messages = stream
        .create_consumer(OrderedConfig {
            filter_subjects: subjects.partition_events(0),
            deliver_policy: DeliverPolicy::All,
            max_expires: Duration::from_secs(5),
            ..Default::default()
        })
        .await
        .map_err(ProjectorError::event_log)?
        .messages()
        .await
        .map_err(ProjectorError::event_log)?;
    let chunks = tokio_stream::StreamExt::chunks_timeout(
        messages,
        config.batch_max.max(1),
        config.batch_wait,
    );
    tokio::pin!(chunks);
    let mut replay = Replay {
        pool: &copy_pool,
        keyring: &keyring,
        models,
        concurrency: config.apply_concurrency.max(1),
        position: 0,
        subjects: &subjects,
        bar: progress_bar(options.progress_bar),
        logged_at: Instant::now(),
    };
    let names = projections::names_of(models);
    let mut check = tokio::time::interval(CATCH_UP_CHECK);
    loop {
        // The select only picks what happens next; the work happens outside it.
        let step = tokio::select! {
            () = shutdown.cancelled() => anyhow::bail!("the rebuild was interrupted"),
            chunk = chunks.next() => Step::Apply(chunk.context("the event log's consumer ended")?),
            _ = check.tick() => Step::Check,
        };
        match step {
            Step::Apply(chunk) => replay.apply(chunk).await?,
            Step::Check => {
                let info = stream
                    .clone()
                    .get_info()
                    .await
                    .map_err(ProjectorError::event_log)?;
                replay.report(info.state.last_sequence);
                if replay.position < live_position(pool, &names).await? {
                    continue;
                }
                // The copy swaps in nothing past retention: the same sweep as the live
                // projector's, on the copy's tables (its pool resolves them to the copy).
                let tables: Vec<&str> = models.iter().flat_map(|m| m.tables()).copied().collect();
                crate::retention::sweep_tables(&copy_pool, &keyring, chrono::Utc::now(), &tables)
                    .await
                    .context("sweeping the copy for retention")?;
                copy.vacuum_analyze(pool).await?;
                let swap_started = Instant::now();
                match swap(pool, copy, &names, &mut replay, &mut chunks).await {
                    Ok(()) => {
                        replay.bar.finish();
                        let swap = swap_started.elapsed();
                        tracing::info!(
                            position = replay.position,
                            swap_ms = swap.as_millis() as u64,
                            "rebuilt tables swapped in"
                        );
                        return Ok((replay.position, swap));
                    }
                    Err(error) if is_lock_timeout(&error) => {
                        tracing::warn!("the swap waited too long for its locks; trying again");
                    }
                    Err(error) => return Err(error),
                }
            }
        }
    }
}

/// What the replay loop does next.
enum Step {
    Apply(Chunk),
    Check,
}

/// The swap transaction (see the module docs).
async fn swap(
    pool: &PgPool,
    copy: &TableCopy,
    names: &[&'static str],
    replay: &mut Replay<'_>,
    chunks: &mut (impl Stream<Item = Chunk> + Unpin),
) -> anyhow::Result<()> {
    let mut tx = pool.begin().await?;
    let set_timeout = format!("SET LOCAL lock_timeout = '{SWAP_LOCK_TIMEOUT}'");
    (&mut *tx).execute(set_timeout.as_str()).await?;
    let live = checkpoint::lock(&mut tx, names, 0).await?;
    let live = live.into_iter().max().unwrap_or(0);
    let deadline = tokio::time::Instant::now() + SWAP_CATCH_UP;
    while replay.position < live {
        let chunk = tokio::time::timeout_at(deadline, chunks.next())
            .await
            .context("the swap could not catch up with the live projector in time")?
            .context("the event log's consumer ended")?;
        replay.apply(chunk).await?;
    }
    copy.swap_in(&mut tx, names, replay.position).await?;
    tx.commit().await?;
    Ok(())
}

/// The highest live checkpoint among `names`: the copy must reach it before the swap.
async fn live_position(pool: &PgPool, names: &[&'static str]) -> Result<u64, sqlx::Error> {
    let live: Option<i64> = sqlx::query_scalar(
        "SELECT max(last_sequence) FROM public.projection_checkpoints WHERE projection = ANY($1)",
    )
    .bind(names)
    .fetch_one(pool)
    .await?;
    Ok(u64::try_from(live.unwrap_or(0)).unwrap_or(0))
}

/// The event stream, and the keyring that opens its personal fields.
async fn open_log(config: &Config) -> anyhow::Result<(shared::nats::EventStream, Keyring)> {
    let nats = shared::nats::connect("warden-projector-rebuild", &config.common.nats_url).await?;
    let js = async_nats::jetstream::new(nats.client);
    let event_log = &config.common.event_log;
    let stream = shared::nats::existing_event_stream(&js, event_log).await?;
    let keyring = config.privacy.keyring(&js, event_log).await?;
    Ok((stream, keyring))
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
