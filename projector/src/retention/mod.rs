//! Retention per kind: each account's privacy policy says how many days chat, IP
//! hashes, sessions, custom events and anti-cheat flags are kept. The sweeper removes the rows
//! past each cutoff from the read models, by each row's own time (sent_at, joined_at,
//! occurred_at, flagged_at), and then destroys the account's period keys of the days wholly
//! before the cutoff, so the personal fields of those days' log messages can no longer be
//! opened: a rebuild replays them as erased ([`Keyring::destroy_periods_before`]).
//!
//! Aggregates stay: rollups, active days, counts, playtime. The live projector sweeps while it
//! leads (at start and every `RETENTION_SWEEP_SECS`), beside its consumer; a rebuild sweeps its
//! copy before the swap, so the tables it swaps in hold nothing past retention either.

mod sweep;

use chrono::{DateTime, Utc};
use shared::privacy::{Keyring, RetentionKind, day_of};
use sqlx::PgPool;
use std::collections::HashMap;
use std::future::Future;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

pub use sweep::BATCH_ROWS;

/// What one sweep did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SweepReport {
    /// Accounts with a policy.
    pub accounts: usize,
    /// Rows removed (for IP hashes: blanked), by kind.
    pub rows: HashMap<RetentionKind, u64>,
    /// Period keys destroyed, by kind.
    pub periods: HashMap<RetentionKind, usize>,
}

impl SweepReport {
    /// Rows of `kind` removed (or blanked).
    pub fn rows(&self, kind: RetentionKind) -> u64 {
        self.rows.get(&kind).copied().unwrap_or(0)
    }

    /// Whether the sweep changed anything.
    pub fn is_empty(&self) -> bool {
        self.rows.values().all(|n| *n == 0) && self.periods.values().all(|n| *n == 0)
    }
}

/// Sweeps the live read models: every account's rows past its cutoffs at `now`, then its
/// period keys of the days before them. Idempotent; safe beside the consumer (each statement
/// commits on its own, and a row the consumer changes meanwhile is left for the next sweep).
pub async fn sweep(
    pool: &PgPool,
    keyring: &Keyring,
    now: DateTime<Utc>,
) -> anyhow::Result<SweepReport> {
    sweep_in(pool, keyring, now, &|_| true).await
}

/// [`sweep`] limited to `tables` (a rebuild's copy: the tables of the models it rebuilds; its
/// pool resolves them to the copy).
pub(crate) async fn sweep_tables(
    pool: &PgPool,
    keyring: &Keyring,
    now: DateTime<Utc>,
    tables: &[&str],
) -> anyhow::Result<SweepReport> {
    sweep_in(pool, keyring, now, &|table| tables.contains(&table)).await
}

async fn sweep_in(
    pool: &PgPool,
    keyring: &Keyring,
    now: DateTime<Utc>,
    in_scope: &(dyn Fn(&str) -> bool + Sync),
) -> anyhow::Result<SweepReport> {
    let policies = keyring.policies().await?;
    let mut report = SweepReport {
        accounts: policies.len(),
        ..SweepReport::default()
    };
    for (account, policy) in policies {
        for kind in RetentionKind::ALL {
            let Some(cutoff) = policy.cutoff(kind, now) else {
                continue;
            };
            let rows = sweep::sweep_kind(pool, account, kind, cutoff, in_scope).await?;
            // Rows first: keys go only once the rows they could be read back from are gone.
            let periods = keyring
                .destroy_periods_before(account, kind, day_of(cutoff))
                .await?;
            metrics::counter!("projector_retention_rows_removed_total", "kind" => kind.as_str())
                .increment(rows);
            metrics::counter!(
                "projector_retention_periods_destroyed_total",
                "kind" => kind.as_str()
            )
            .increment(periods as u64);
            *report.rows.entry(kind).or_default() += rows;
            *report.periods.entry(kind).or_default() += periods;
        }
    }
    Ok(report)
}

/// The live projector's sweeper: what it sweeps and how often.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sweeper<'a> {
    pub(crate) pool: &'a PgPool,
    pub(crate) keyring: &'a Keyring,
    pub(crate) every: Duration,
}

impl Sweeper<'_> {
    /// Runs `consuming` (the leader's consumer) with sweeps beside it: one at once, then every
    /// `every`, until `consuming` ends.
    pub(crate) async fn beside<T>(self, consuming: impl Future<Output = T>) -> T {
        let stop = CancellationToken::new();
        let (result, ()) = tokio::join!(
            async {
                let result = consuming.await;
                stop.cancel();
                result
            },
            self.run(&stop)
        );
        result
    }

    async fn run(self, stop: &CancellationToken) {
        loop {
            let swept = tokio::select! {
                () = stop.cancelled() => return,
                swept = sweep(self.pool, self.keyring, Utc::now()) => swept,
            };
            match swept {
                Ok(report) if report.is_empty() => {
                    metrics::counter!("projector_retention_sweeps_total", "outcome" => "ok")
                        .increment(1);
                    tracing::debug!(accounts = report.accounts, "retention sweep: nothing due");
                }
                Ok(report) => {
                    metrics::counter!("projector_retention_sweeps_total", "outcome" => "ok")
                        .increment(1);
                    tracing::info!(
                        accounts = report.accounts,
                        chat = report.rows(RetentionKind::Chat),
                        ip_hashes = report.rows(RetentionKind::IpHashes),
                        sessions = report.rows(RetentionKind::Sessions),
                        custom_events = report.rows(RetentionKind::CustomEvents),
                        anticheat_flags = report.rows(RetentionKind::AnticheatFlags),
                        period_keys = report.periods.values().sum::<usize>(),
                        "retention sweep removed rows past their accounts' retention"
                    );
                }
                Err(error) => {
                    metrics::counter!("projector_retention_sweeps_total", "outcome" => "failed")
                        .increment(1);
                    tracing::warn!(
                        error = format!("{error:#}"),
                        retry_in_secs = self.every.as_secs(),
                        "retention sweep failed; trying again later"
                    );
                }
            }
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(self.every) => {}
            }
        }
    }
}

/// Describes the sweeper's metrics.
pub(crate) fn describe_metrics() {
    use metrics::describe_counter;
    describe_counter!(
        "projector_retention_rows_removed_total",
        "Read-model rows removed (IP hashes: blanked) for being past retention, by kind"
    );
    describe_counter!(
        "projector_retention_periods_destroyed_total",
        "Period keys destroyed for leaving retention, by kind"
    );
    describe_counter!(
        "projector_retention_sweeps_total",
        "Retention sweeps, by outcome (ok, failed)"
    );
}
