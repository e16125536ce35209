//! Every dashboard read again while ingest and the projector carry a steady write load: chat
//! batches posted through ingest at half of the write capacity this run measured (ingest and
//! the projector together, `ingest_plus_projector`; with `--only reads`, a short probe of the
//! same), with the projector applying them as they come. The writes go to the write phases'
//! account, so the reads see the same data as on the quiet machine while sharing the cores,
//! the disk, the tables and their indexes with the writes.
//!
//! Each read's measurement is reported again with the suffix [`SUFFIX`], beside its quiet one.

use crate::children::ServiceProcess;
use crate::data::ChatBodies;
use crate::ingest_load::paced_chat;
use crate::projection::{last_sequence, wait_projected};
use crate::read_set::ReadSet;
use crate::run::{Bench, phase};
use crate::serve::Service;
use rand::SeedableRng;
use rand::rngs::StdRng;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// Appended to a read's name for its measurement under the write load.
pub(crate) const SUFFIX: &str = "_under_load";
/// The write phases' measurement of ingest and the projector together.
const CAPACITY: &str = "ingest_plus_projector";
/// The load's share of that capacity.
const SHARE: f64 = 0.5;

/// Measures `set` under the load; `projector` is the write phases' one when they ran (else one
/// is started for the phase and stopped after it).
pub(crate) async fn run(
    b: &mut Bench,
    (query, ingest, projector): (&ServiceProcess, &ServiceProcess, Option<&ServiceProcess>),
    set: &ReadSet,
) -> anyhow::Result<()> {
    phase("dashboard reads under a steady write load");
    let own = match projector {
        Some(_) => None,
        None => Some(b.start(Service::Projector).await?),
    };
    let measured = measure(b, (query, ingest, projector.or(own.as_ref())), set).await;
    if let Some(own) = own {
        b.memory("reads under a steady write load", &own);
        own.stop().await;
    }
    measured
}

async fn measure(
    b: &mut Bench,
    (query, ingest, projector): (&ServiceProcess, &ServiceProcess, Option<&ServiceProcess>),
    set: &ReadSet,
) -> anyhow::Result<()> {
    let capacity = match b.report.get(CAPACITY) {
        Some(measured) => measured.rate_per_s,
        None => probe(b, ingest).await?,
    };
    let rate = capacity * SHARE;
    let keys = b
        .admin
        .keys(b.account, "plugin", b.plan.load_servers)
        .await?;
    let bodies = Arc::new(ChatBodies::new(&mut StdRng::seed_from_u64(29), &b.players)?);
    let stop = CancellationToken::new();
    let load = tokio::spawn(paced_chat(
        b.http.clone(),
        ingest.base_url.clone(),
        keys,
        bodies,
        rate,
        stop.clone(),
    ));
    // The load runs a while before the reads, so they meet its steady state (the projector
    // applying as fast as records come, checkpoints, autovacuum), not its start.
    tokio::time::sleep(b.plan.load_settle).await;
    let mut services = vec![query, ingest];
    services.extend(projector);
    let cpu = b.cpu(&services);
    let read = set.measure(b, "under a steady write load").await;
    let cpu = cpu.since();
    stop.cancel();
    let outcome = load.await?;
    let (reads, notes) = read?;

    let end = last_sequence(&b.js, &b.log.stream).await?;
    let drained = Instant::now();
    wait_projected(&b.svc_pool, end, Duration::from_secs(600)).await?;
    let drained = drained.elapsed();
    let achieved = outcome.accepted as f64 / outcome.elapsed.as_secs_f64().max(1e-9);
    let what = format!(
        "chat batches through ingest at a steady {rate:.0} records/s ({SHARE} x the \
         {capacity:.0} records/s ingest and the projector carried together in this run), \
         while every dashboard read was timed again"
    );
    b.report
        .measurements
        .push(outcome.measurement("steady_write_load", &what, "records"));
    b.note(
        "steady_write_load",
        format!(
            "achieved {:.0}% of the intended rate; the projector was {:.1} s behind when the \
             load stopped; {cpu}",
            100.0 * achieved / rate.max(1e-9),
            drained.as_secs_f64()
        ),
    );
    for mut measured in reads {
        measured.name.push_str(SUFFIX);
        measured.what = format!("{} (under the steady write load)", measured.what);
        b.report.measurements.push(measured);
    }
    b.report.notes.extend(
        notes
            .into_iter()
            .map(|n| format!("under the write load: {n}")),
    );
    Ok(())
}

/// With `--only reads` no write phase measured the capacity: chat batches as fast as ingest
/// takes them, with the projector running, for the sustained phase's duration; records over
/// the time until the projector has applied them all (as `ingest_plus_projector` is measured).
async fn probe(b: &mut Bench, ingest: &ServiceProcess) -> anyhow::Result<f64> {
    phase("write capacity probe (ingest + projector)");
    let what = "chat batches over HTTP with the projector running, records over the time until \
                the projector applied them all (what the steady write load is half of, with \
                --only reads)";
    let measured =
        crate::write_phases::sustained(b, ingest, ("write_capacity_probe", what)).await?;
    let rate = measured.rate_per_s;
    b.report.measurements.push(measured);
    Ok(rate)
}
