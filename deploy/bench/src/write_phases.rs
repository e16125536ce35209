//! The write side: raw publish baseline, ingest over HTTP, projector catch-up and its raw
//! insert baselines (one and two connections), then ingest and projector together against the
//! raw chain.

use crate::chain::raw_chain;
use crate::children::ServiceProcess;
use crate::data::{CHAT_BATCH, chat_log_message};
use crate::ingest_load::{chat_servers, single_events};
use crate::projection::{last_sequence, subject_of, top_up_backlog, wait_projected};
use crate::raw::{Outgoing, publish_pipelined, raw_stream};
use crate::run::{Bench, phase};
use crate::serve::Service;
use crate::stats::Measurement;
use crate::{index_cost, raw_insert};
use rand::SeedableRng;
use rand::rngs::StdRng;
use std::time::{Duration, Instant};
use uuid::Uuid;

/// Runs the write phases; returns the projector, left running for the read phases.
pub(crate) async fn run(b: &mut Bench, ingest: &ServiceProcess) -> anyhow::Result<ServiceProcess> {
    raw_publish(b).await?;

    phase("ingest: chat batches over HTTP");
    let keys = b
        .admin
        .keys(b.account, "plugin", b.plan.chat_servers)
        .await?;
    let cpu = b.cpu(&[ingest]);
    let chat = chat_servers(
        &b.http,
        &ingest.base_url,
        &keys,
        b.players.clone(),
        b.plan.chat_duration,
    )
    .await?;
    let what = format!(
        "{} simulated servers (one plugin key each) posting 100-record chat batches, each \
         awaiting its 202 (the durable ack); latency per request",
        b.plan.chat_servers
    );
    b.report
        .measurements
        .push(chat.measurement("ingest_chat", &what, "records"));
    b.note("ingest_chat", cpu.since());

    phase("ingest: single custom events");
    let keys = b
        .admin
        .keys(b.account, "plugin", b.plan.event_clients)
        .await?;
    let events = single_events(&b.http, &ingest.base_url, &keys, b.plan.event_duration).await;
    let what = format!(
        "{} clients posting one custom event per request, each awaiting its 202",
        b.plan.event_clients
    );
    b.report
        .measurements
        .push(events.measurement("ingest_single_event", &what, "requests"));
    b.memory("after the chat and event load", ingest);

    phase("projector: catch-up from a backlog");
    let in_log = (chat.accepted + events.accepted) as usize;
    let missing = b.plan.backlog_records.saturating_sub(in_log);
    let subjects = b.log.subjects();
    let topped = top_up_backlog(
        &b.js,
        &b.log.stream,
        &subjects,
        b.account,
        &b.players,
        missing,
    )
    .await?;
    let last = last_sequence(&b.js, &b.log.stream).await?;
    let started = Instant::now();
    let projector = b.start(Service::Projector).await?;
    let cpu = b.cpu(&[&projector]);
    wait_projected(&b.svc_pool, last, Duration::from_secs(3600)).await?;
    b.note("projector_catch_up", cpu.since());
    let what = format!(
        "projector process started on a backlog of {last} log messages (the ingest phases' \
         chat batches and events, topped up with 70% chat / 20% custom-event / 10% join-quit \
         batches) until every checkpoint reached the end; includes its start-up"
    );
    let records = (in_log + topped) as u64;
    b.report.measurements.push(Measurement::new(
        "projector_catch_up",
        &what,
        "records",
        records,
        started.elapsed(),
        None,
        0,
    ));
    b.memory("after catch-up", &projector);

    raw_insert::measure(b, last).await?;
    // On a chat backlog of its own, so its size does not follow the ingest phases'.
    index_cost::measure(b).await?;

    phase("ingest + projector sustained");
    let cpu = b.cpu(&[ingest, &projector]);
    let what = "chat batches over HTTP with the projector running; records over the time until \
                the projector has applied them all";
    let measured = sustained(b, ingest, ("ingest_plus_projector", what)).await?;
    let accepted = measured.count;
    b.note("ingest_plus_projector", cpu.since());
    b.report.measurements.push(measured);

    phase("raw chain baseline");
    let messages = (accepted as usize / CHAT_BATCH).max(1);
    let chain = raw_chain(&b.js, &b.raw_pool, messages, &b.players).await?;
    b.report.measurements.push(chain);
    Ok(projector)
}

/// Chat batches as fast as ingest takes them for the sustained phase's duration, with the
/// projector running: records over the time until the projector has applied them all.
pub(crate) async fn sustained(
    b: &Bench,
    ingest: &ServiceProcess,
    (name, what): (&str, &str),
) -> anyhow::Result<Measurement> {
    let keys = b
        .admin
        .keys(b.account, "plugin", b.plan.chat_servers)
        .await?;
    let started = Instant::now();
    let load = chat_servers(
        &b.http,
        &ingest.base_url,
        &keys,
        b.players.clone(),
        b.plan.sustained_duration,
    )
    .await?;
    let end = last_sequence(&b.js, &b.log.stream).await?;
    wait_projected(&b.svc_pool, end, Duration::from_secs(1800)).await?;
    Ok(Measurement::new(
        name,
        what,
        "records",
        load.accepted,
        started.elapsed(),
        Some(&load.latencies),
        load.errors,
    ))
}

async fn raw_publish(b: &mut Bench) -> anyhow::Result<()> {
    phase("raw publish baseline");
    let raw = raw_stream(&b.js, "BENCH_RAW", "raw").await?;
    let subjects = raw.subjects();
    let mut rng = StdRng::seed_from_u64(1);
    let outgoing: Vec<Outgoing> = (0..b.plan.raw_publish_messages)
        .map(|_| {
            let message = chat_log_message(&mut rng, b.account, Uuid::new_v4(), &b.players);
            Outgoing {
                subject: subject_of(&subjects, &message),
                message_id: Uuid::new_v4().simple().to_string(),
                payload: message.encode(),
            }
        })
        .collect();
    let cpu = b.cpu(&[]);
    let (latencies, elapsed, errors) = publish_pipelined(&b.js, &raw.stream, outgoing).await?;
    b.note("raw_publish", cpu.since());
    let what = "baseline: the log messages ingest writes for 100-record chat batches, published \
                pipelined with message ids to a stream configured like ours; latency is send to \
                ack with the whole window in flight";
    let records = (b.plan.raw_publish_messages * CHAT_BATCH) as u64;
    b.report.measurements.push(Measurement::new(
        "raw_publish",
        what,
        "records",
        records,
        elapsed,
        Some(&latencies),
        errors,
    ));
    Ok(())
}
