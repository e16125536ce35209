//! Funnels: how many players went from a custom event through later steps, and how long each
//! step took.
//!
//! PostgreSQL streams each player's step events, in timeline order, off a covering index
//! ([`scan`]); the service walks them one player at a time ([`journey`]) and tallies players and
//! step durations ([`Tally`]). The player id space is cut into slices read in parallel on
//! separate connections (`FUNNEL_PARALLELISM`), so a large funnel uses more than one
//! PostgreSQL core. Aggregating inside PostgreSQL (`array_agg` per player and a PL/pgSQL walk)
//! cost 3-4 s over 1M events; this path costs a fraction of that (see the README's
//! Benchmarks section).

mod copy_connection;
pub mod journey;
mod scan;

use chrono::{DateTime, Duration, Utc};
use copy_connection::CopyConnection;
use futures::StreamExt;
use journey::{JourneyEvent, Walk};
pub use scan::CopyFormatError;
use scan::{CopyReader, SliceQuery, pg_micros, player_slices};
use serde::{Deserialize, Serialize};
use sqlx::{PgConnection, PgPool};
use std::sync::Arc;
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
    let spec = Arc::new(spec);
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
            tokio::spawn(async move { tally_slice(&pool, account, &spec, &walk, players).await })
        })
        .collect();
    let mut total = Tally::new(spec.steps.len());
    for slice in slices {
        total.merge(slice.await??);
    }
    Ok(total.outcomes())
}

async fn tally_slice(
    pool: &PgPool,
    account: Uuid,
    spec: &FunnelSpec,
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
    }
    .statement();
    // On any error below (or if this task is dropped) the connection is closed, not pooled.
    let mut connection = CopyConnection::acquire(pool).await?;
    let tally = read_slice(connection.connection(), &statement, walk).await?;
    connection.release();
    Ok(tally)
}

/// Runs one slice's COPY on `connection` and walks its players; `Ok` only once the COPY was
/// read to its end.
async fn read_slice(
    connection: &mut PgConnection,
    statement: &str,
    walk: &Walk,
) -> Result<Tally, FunnelError> {
    let mut stream = connection.copy_out_raw(statement).await?;
    let mut reader = CopyReader::default();
    let mut tally = Tally::new(walk.steps());
    let mut current: Option<Uuid> = None;
    let mut events: Vec<JourneyEvent> = Vec::new();
    while let Some(chunk) = stream.next().await {
        reader.feed(&chunk?, |row| {
            if current != Some(row.player) {
                if current.is_some() {
                    tally.add(&walk.progress(&events));
                }
                current = Some(row.player);
                events.clear();
            }
            events.push(JourneyEvent {
                code: walk.code_of(row.name),
                at: row.at,
            });
        })?;
    }
    reader.finish()?;
    if current.is_some() {
        tally.add(&walk.progress(&events));
    }
    Ok(tally)
}

/// Players per step and the time each took, summed over players.
#[derive(Debug, Clone, PartialEq)]
struct Tally {
    players: Vec<i64>,
    /// Per step (index 0 unused): microseconds from the previous step, one per player.
    durations: Vec<Vec<i64>>,
}

impl Tally {
    fn new(steps: usize) -> Tally {
        Tally {
            players: vec![0; steps],
            durations: vec![Vec::new(); steps],
        }
    }

    fn add(&mut self, reached: &journey::Reached) {
        let times = reached.as_slice();
        for (k, at) in times.iter().enumerate() {
            self.players[k] += 1;
            if k > 0 {
                self.durations[k].push(at - times[k - 1]);
            }
        }
    }

    fn merge(&mut self, other: Tally) {
        for (mine, theirs) in self.players.iter_mut().zip(other.players) {
            *mine += theirs;
        }
        for (mine, theirs) in self.durations.iter_mut().zip(other.durations) {
            mine.extend(theirs);
        }
    }

    fn outcomes(mut self) -> Vec<StepOutcome> {
        self.players
            .iter()
            .zip(self.durations.iter_mut())
            .enumerate()
            .map(|(k, (&players, durations))| StepOutcome {
                players,
                median_seconds: if k == 0 {
                    None
                } else {
                    median_seconds(durations)
                },
            })
            .collect()
    }
}

/// The median of microsecond durations, in seconds, interpolated between the two middle
/// values for an even count (PostgreSQL's `percentile_cont(0.5)`).
fn median_seconds(micros: &mut [i64]) -> Option<f64> {
    let n = micros.len();
    if n == 0 {
        return None;
    }
    let seconds = |m: i64| m as f64 / 1e6;
    let upper_index = n / 2;
    let (below, upper, _) = micros.select_nth_unstable(upper_index);
    let upper = seconds(*upper);
    if n % 2 == 1 {
        return Some(upper);
    }
    let lower = below.iter().copied().max().map_or(upper, seconds);
    Some(lower + (upper - lower) * 0.5)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_interpolates_between_the_middle_values() {
        assert_eq!(median_seconds(&mut []), None);
        assert_eq!(median_seconds(&mut [5_000_000]), Some(5.0));
        assert_eq!(median_seconds(&mut [300_000_000, 60_000_000]), Some(180.0));
        assert_eq!(
            median_seconds(&mut [3, 1, 2].map(|s| s * 1_000_000)),
            Some(2.0)
        );
        let even = median_seconds(&mut [1_500_000, 1, 10, 7]).expect("a median");
        assert!((even - 0.0000085).abs() < 1e-15, "{even}");
    }

    #[test]
    fn a_tally_counts_players_per_step_and_merges() {
        let steps = ["a", "b", "c"].map(String::from);
        let walk = Walk::new(&steps, FunnelOrder::Sequential, 100, 0, 1000);
        let event = |code, at| JourneyEvent { code, at };
        let mut left = Tally::new(3);
        left.add(&walk.progress(&[event(1, 0), event(2, 10), event(3, 30)]));
        left.add(&walk.progress(&[event(2, 0)]));
        let mut right = Tally::new(3);
        right.add(&walk.progress(&[event(1, 5), event(2, 9)]));
        left.merge(right);
        assert_eq!(left.players, [2, 2, 1]);
        assert_eq!(left.durations[1], [10, 4]);
        let outcomes = left.outcomes();
        assert_eq!(outcomes[0].median_seconds, None);
        let near =
            |value: Option<f64>, expected: f64| value.is_some_and(|v| (v - expected).abs() < 1e-15);
        assert!(near(outcomes[1].median_seconds, 0.000007), "{outcomes:?}");
        assert!(near(outcomes[2].median_seconds, 0.00002), "{outcomes:?}");
    }
}
