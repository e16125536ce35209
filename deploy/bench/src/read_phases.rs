//! The read side: POST -> live stream latency, query-api's memory with many open streams,
//! and reads on a large dataset.

use crate::children::ServiceProcess;
use crate::e2e::{REFUSED_OPENS, Subscribers, post_to_stream};
use crate::reads::{build_dataset, measure_reads};
use crate::run::{Bench, phase};
use crate::stats::Measurement;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Runs the read phases; returns how many streams were open for the memory measurement.
pub(crate) async fn run(
    b: &mut Bench,
    query: &ServiceProcess,
    ingest: &ServiceProcess,
) -> anyhow::Result<usize> {
    phase("end to end: POST -> live stream");
    let dashboard = b
        .admin
        .keys(b.account, "dashboard", b.plan.subscribers.div_ceil(20))
        .await?;
    let plugin = b.admin.keys(b.account, "plugin", 4).await?;
    let e2e = post_to_stream(
        &b.http,
        &query.base_url,
        &ingest.base_url,
        &dashboard,
        &plugin,
        b.plan.subscribers,
        b.plan.e2e_rate,
        b.plan.e2e_duration,
    )
    .await;
    b.report.measurements.push(e2e);

    phase("query-api memory with open streams");
    let dashboard = b
        .admin
        .keys(b.account, "dashboard", b.plan.open_streams.div_ceil(40))
        .await?;
    let streams = Subscribers::open(&b.http, &query.base_url, &dashboard, b.plan.open_streams);
    let open = streams.wait_connected(Duration::from_secs(90)).await;
    streams
        .post_steadily(
            &b.http,
            &ingest.base_url,
            &plugin,
            20,
            Duration::from_secs(2),
        )
        .await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    b.memory(&format!("with {open} open streams"), query);
    if let Some(rss) = query.rss_mib() {
        let key = format!("query-api: VmRSS (not peak) with {open} open streams");
        b.report.memory_mib.insert(key, rss);
    }
    streams.close().await;
    let refused = REFUSED_OPENS.load(Ordering::Relaxed);
    if refused > 0 {
        b.report.notes.push(format!(
            "{refused} stream opens were refused with 429 and retried: many concurrent requests \
             on one dashboard key contend on the quota's compare-and-set"
        ));
    }

    phase("reads on a large dataset");
    let readers = b.admin.account("bench reads").await?;
    let started = Instant::now();
    let (players, chat, events) = (
        b.plan.dataset_players,
        b.plan.dataset_chat,
        b.plan.dataset_events,
    );
    let ids = build_dataset(&b.svc_pool, readers, players, chat, events).await?;
    let rows = (players + chat + events) as u64;
    let what = "players, chat lines and events UNNEST-inserted into the read-model tables \
                (informational)";
    b.report.measurements.push(Measurement::new(
        "dataset_build",
        what,
        "rows",
        rows,
        started.elapsed(),
        None,
        0,
    ));
    let per_key = 50;
    let requests = 3 * (b.plan.reads_per_query + 5) + b.plan.funnel_runs;
    let keys = b
        .admin
        .keys(readers, "dashboard", requests / per_key + 2)
        .await?;
    let reads = measure_reads(
        &b.http,
        &query.base_url,
        &keys,
        &ids,
        b.plan.reads_per_query,
        b.plan.funnel_runs,
    )
    .await;
    b.report.measurements.extend(reads);
    Ok(open)
}
