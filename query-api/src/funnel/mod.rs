//! Funnels: how many players went from a custom event through later steps, and how long each
//! step took.
//!
//! PostgreSQL streams each player's step events, in timeline order, off a covering index
//! ([`scan`]); the service walks them one player at a time ([`journey`]) and tallies players and
//! step durations (`tally`), from which come each step's median times and time to convert
//! ([`time_to_convert`]). Two extras are opt-in ([`Extras`]): a breakdown by a property of the
//! entry (`breakdown`; the COPY then reads that property, leaving the index-only scan) and a
//! page of the players who dropped off at a step (`drop_off`). The player id space is cut into slices read in parallel on
//! separate connections (`FUNNEL_PARALLELISM`), so a large funnel uses more than one
//! PostgreSQL core. Aggregating inside PostgreSQL (`array_agg` per player and a PL/pgSQL walk)
//! cost 3-4 s over 1M events; this path costs a fraction of that (the target, in
//! `docs/benchmarks.md`: p99 <= 500 ms over 1M events).

mod breakdown;
mod copy_connection;
mod drop_off;
pub mod journey;
mod scan;
mod tally;
pub mod time_to_convert;

pub use breakdown::{BreakdownGroup, BreakdownRow};
use chrono::{DateTime, Duration, Utc};
use copy_connection::CopyConnection;
pub use drop_off::{DropOffPage, DroppedPlayer};
use futures::StreamExt;
use journey::{JourneyEvent, Walk};
pub use scan::CopyFormatError;
use scan::{CopyReader, SliceQuery, pg_micros, player_slices};
use serde::{Deserialize, Serialize};
use sqlx::{PgConnection, PgPool};
use std::sync::Arc;
use tally::Tally;
pub use time_to_convert::TimeToConvert;
use utoipa::ToSchema;
use uuid::Uuid;

/// How the steps must follow each other.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum FunnelOrder {
    /// In order; other events may come between.
    #[default]
    Sequential,
    /// In order, with no other custom event between.
    Strict,
    /// Any order after the first step.
    Any,
}

/// A checked funnel request.
#[derive(Debug, Clone)]
pub struct FunnelSpec {
    /// 2..=10 well-formed event names.
    pub steps: Vec<String>,
    /// Steps must happen within this many seconds of the entry.
    pub window_seconds: i64,
    /// Entries (first-step events) at or after this time...
    pub from: DateTime<Utc>,
    /// ...and before this one.
    pub to: DateTime<Utc>,
    /// How the steps must follow each other.
    pub order: FunnelOrder,
}

/// One step's outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct StepOutcome {
    /// Distinct players who reached the step.
    pub players: i64,
    /// Median seconds from the previous step (None for step 1 or when nobody reached it).
    pub median_seconds: Option<f64>,
    /// Time from step 1 to this step (None for step 1).
    pub time_to_convert: Option<TimeToConvert>,
}

/// What a funnel computes besides its counts and times, when asked.
#[derive(Debug, Clone, Default)]
pub struct Extras {
    /// Break the counts down by a property of each player's entry.
    pub breakdown: Option<BreakdownSpec>,
    /// List the players who dropped off at a step.
    pub dropped_off: Option<DropOffSpec>,
}

/// A breakdown by one property of the step-1 event.
#[derive(Debug, Clone)]
pub struct BreakdownSpec {
    /// The property's key (checked by the route: `^[A-Za-z0-9_.:-]{1,64}$`).
    pub property: String,
    /// How many values get a row of their own; the rest are "other".
    pub limit: usize,
}

/// Which players who dropped off to list.
#[derive(Debug, Clone)]
pub struct DropOffSpec {
    /// Players whose best entry reached exactly this many steps (1..steps - 1): they reached
    /// step `step` but not the next one.
    pub step: usize,
    /// At most this many players.
    pub limit: usize,
    /// Only players with a higher id (the previous page's cursor).
    pub after: Option<Uuid>,
}

/// A funnel's outcome with its extras.
#[derive(Debug, Clone, PartialEq)]
pub struct FunnelReport {
    /// One outcome per step.
    pub steps: Vec<StepOutcome>,
    /// The breakdown's rows, when asked for.
    pub breakdown: Option<Vec<BreakdownRow>>,
    /// The page of players who dropped off, when asked for.
    pub dropped_off: Option<DropOffPage>,
}

/// Why a funnel could not be computed.
#[derive(Debug, thiserror::Error)]
pub enum FunnelError {
    /// The query failed.
    #[error(transparent)]
    Database(#[from] sqlx::Error),
    /// The stream was not the binary COPY format expected.
    #[error("reading the funnel's events: {0}")]
    Format(#[from] CopyFormatError),
    /// A slice's task panicked or was cancelled.
    #[error("a funnel slice did not finish: {0}")]
    Task(#[from] tokio::task::JoinError),
    /// `to + window_seconds` is past what a timestamp holds (the route refuses such
    /// requests with a 422 first).
    #[error("the funnel's time range ends past the last representable time")]
    OutOfRange,
}

/// Computes `spec` over `account`'s events, reading `parallelism` slices of the player id space
/// at once.
pub async fn compute(
    pool: &PgPool,
    account: Uuid,
    spec: FunnelSpec,
    parallelism: usize,
) -> Result<Vec<StepOutcome>, FunnelError> {
    let report = compute_report(pool, account, spec, Extras::default(), parallelism).await?;
    Ok(report.steps)
}

/// [`compute`], with the `extras` asked for.
pub async fn compute_report(
    pool: &PgPool,
    account: Uuid,
    spec: FunnelSpec,
    extras: Extras,
    parallelism: usize,
) -> Result<FunnelReport, FunnelError> {
    let spec = Arc::new(spec);
    let extras = Arc::new(extras);
    let window = spec.window_seconds.saturating_mul(1_000_000);
    let walk = Arc::new(Walk::new(
        &spec.steps,
        spec.order,
        window,
        pg_micros(spec.from),
        pg_micros(spec.to),
    ));
    // Each slice runs as its own task, so that its parsing and walking use another core, and
    // so that it reads its COPY stream to the end even if the client goes away.
    let slices: Vec<_> = player_slices(parallelism)
        .into_iter()
        .map(|players| {
            let (pool, spec, walk) = (pool.clone(), spec.clone(), walk.clone());
            let extras = extras.clone();
            tokio::spawn(async move {
                tally_slice(&pool, account, &spec, &extras, &walk, players).await
            })
        })
        .collect();
    let mut total = Tally::new(spec.steps.len(), &extras);
    for slice in slices {
        total.merge(slice.await??);
    }
    Ok(total.report(&extras))
}

async fn tally_slice(
    pool: &PgPool,
    account: Uuid,
    spec: &FunnelSpec,
    extras: &Extras,
    walk: &Walk,
    players: std::ops::RangeInclusive<Uuid>,
) -> Result<Tally, FunnelError> {
    let until = spec
        .to
        .checked_add_signed(Duration::seconds(spec.window_seconds))
        .ok_or(FunnelError::OutOfRange)?;
    let statement = SliceQuery {
        account,
        steps: &spec.steps,
        order: spec.order,
        from: spec.from,
        until,
        players,
        breakdown: extras.breakdown.as_ref().map(|b| b.property.as_str()),
    }
    .statement();
    // On any error below (or if this task is dropped) the connection is closed, not pooled.
    let mut connection = CopyConnection::acquire(pool).await?;
    let tally = read_slice(connection.connection(), &statement, walk, extras).await?;
    connection.release();
    Ok(tally)
}

/// Runs one slice's COPY on `connection` and walks its players; `Ok` only once the COPY was
/// read to its end.
async fn read_slice(
    connection: &mut PgConnection,
    statement: &str,
    walk: &Walk,
    extras: &Extras,
) -> Result<Tally, FunnelError> {
    let mut stream = connection.copy_out_raw(statement).await?;
    let mut reader = CopyReader::default();
    let mut tally = Tally::new(walk.steps(), extras);
    let mut player = PlayerEvents::default();
    let with_properties = extras.breakdown.is_some();
    while let Some(chunk) = stream.next().await {
        reader.feed(&chunk?, |row| {
            if player.current != Some(row.player) {
                player.tally_into(&mut tally, walk);
                player.start(row.player);
            }
            player.events.push(JourneyEvent {
                code: walk.code_of(row.name),
                at: row.at,
            });
            // Only step-1 rows carry a property; kept beside the events, by position (and
            // not at all without a breakdown, to keep the plain funnel's loop as it was).
            if with_properties {
                player.properties.push(row.property.map(Box::from));
            }
        })?;
    }
    reader.finish()?;
    player.tally_into(&mut tally, walk);
    Ok(tally)
}

/// The events of the player being read (reused from one player to the next).
#[derive(Debug, Default)]
struct PlayerEvents {
    current: Option<Uuid>,
    events: Vec<JourneyEvent>,
    /// Per event: the breakdown property's value (None when not asked for or absent).
    properties: Vec<Option<Box<[u8]>>>,
}

impl PlayerEvents {
    fn start(&mut self, player: Uuid) {
        self.current = Some(player);
        self.events.clear();
        self.properties.clear();
    }

    /// Walks the current player, if any, and counts the walk.
    fn tally_into(&self, tally: &mut Tally, walk: &Walk) {
        let Some(player) = self.current else {
            return;
        };
        let reached = walk.progress(&self.events);
        let property = self
            .properties
            .get(reached.entry())
            .and_then(|p| p.as_deref());
        tally.add(player, &reached, property);
    }
}
