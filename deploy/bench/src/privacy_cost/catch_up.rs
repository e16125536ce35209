//! The projector's side of the privacy phase: a catch-up over each side's backlog, opening the
//! sealed fields or reading them clear, into a fresh database.

use super::{PROJECTOR_OFF, PROJECTOR_ON, Side};
use crate::children::ServiceProcess;
use crate::projection::{last_sequence, wait_projected};
use crate::run::{Bench, phase};
use crate::serve::Service;
use crate::setup::{drop_database, fresh_database};
use crate::stats::Measurement;
use sqlx::PgPool;
use std::time::{Duration, Instant};

/// Projects each side's backlog `rounds` times into a fresh database, alternated; adds each
/// side's best catch-up, and a note with every one and the ratio.
pub(super) async fn measure(
    b: &mut Bench,
    rounds: usize,
    appended: [u64; 2],
) -> anyhow::Result<()> {
    phase("privacy: projector catch-up over the sealed and the clear backlog");
    let mut runs: [Vec<Duration>; 2] = [Vec::new(), Vec::new()];
    let mut records = [0u64; 2];
    let mut start_up = Duration::ZERO;
    for round in 0..rounds {
        for side in Side::order(round) {
            let (elapsed, healthy, rows) = catch_up(b, side).await?;
            anyhow::ensure!(
                rows >= appended[side.index()],
                "the projector stored {rows} chat rows from {}, which holds {} accepted records",
                side.stream(),
                appended[side.index()]
            );
            runs[side.index()].push(elapsed);
            records[side.index()] = rows;
            start_up = start_up.max(healthy);
        }
    }
    let best = |side: Side| runs[side.index()].iter().min().copied().unwrap_or_default();
    let mut rates = [0f64; 2];
    for side in Side::BOTH {
        let i = side.index();
        let what = format!(
            "a projector process (PRIVACY_ENCRYPTION={}) started on the {} records the \
             privacy phase's ingest appended to stream {} ({}), into a fresh, empty database, \
             until every checkpoint reached the end; best of {rounds}, alternated with the \
             other side; includes start-up",
            side.setting(),
            records[i],
            side.stream(),
            match side {
                Side::On => "personal fields sealed, opened by the projector",
                Side::Off => "in clear",
            },
        );
        let name = [PROJECTOR_OFF, PROJECTOR_ON][i];
        let measured = Measurement::new(name, &what, "records", records[i], best(side), None, 0);
        rates[i] = measured.rate_per_s;
        b.report.measurements.push(measured);
    }
    let secs = |side: Side| {
        let all: Vec<String> = runs[side.index()]
            .iter()
            .map(|d| format!("{:.2} s", d.as_secs_f64()))
            .collect();
        all.join(", ")
    };
    let note = format!(
        "sealed {:.0} vs clear {:.0} records/s = {:.2}x (informational; the target is on \
         ingest); catch-ups with encryption off: {}; on: {}; each includes the projector's \
         start-up (up to /healthz: at most {:.2} s)",
        rates[1],
        rates[0],
        rates[1] / rates[0].max(1e-9),
        secs(Side::Off),
        secs(Side::On),
        start_up.as_secs_f64()
    );
    b.note(PROJECTOR_ON, note);
    Ok(())
}

/// One catch-up of `side`'s stream into a fresh database; returns its duration, the time to
/// /healthz and the chat rows stored.
async fn catch_up(b: &Bench, side: Side) -> anyhow::Result<(Duration, Duration, u64)> {
    let last = last_sequence(&b.js, side.stream()).await?;
    let name = side.database();
    let url = fresh_database(&b.pg_url, name).await?;
    let pool = PgPool::connect(&url).await?;
    let env = side.env(b, Some(url));
    let log = b.log_dir.join(format!("projector-{name}.log"));
    let started = Instant::now();
    let projector = ServiceProcess::start_logging_to(Service::Projector, &env, &log).await?;
    let healthy = started.elapsed();
    let projected = wait_projected(&pool, last, Duration::from_secs(3600)).await;
    let elapsed = started.elapsed();
    projector.stop().await;
    projected?;
    // A chat line whose text reads as erased is not stored, so a key that failed to open
    // shows as missing rows (the caller compares them with the records appended).
    let rows: i64 = sqlx::query_scalar("SELECT count(*) FROM chat_messages")
        .fetch_one(&pool)
        .await?;
    pool.close().await;
    drop_database(&b.pg_url, name).await?;
    Ok((elapsed, healthy, u64::try_from(rows)?))
}
