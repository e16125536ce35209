//! The read side: POST -> live stream latency, query-api's memory with many open streams,
//! then every dashboard read on the large datasets (players, chat, events, servers' history,
//! player search, retention, trends), on the quiet machine and again under a steady write load.

use crate::children::ServiceProcess;
use crate::dashboard::{SignIns, server_side_within_50ms};
use crate::e2e::{REFUSED_OPENS, Subscribers, post_to_stream};
use crate::history::{Log, SYNC_INTERVAL_SECONDS, row_counts};
use crate::read_set::ReadSet;
use crate::reads::build_dataset;
use crate::run::{Bench, phase};
use crate::stats::Measurement;
use crate::timed::WARM_UP;
use crate::{search_phases, under_load};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

/// Streams opened per dashboard key: query-api's default `MAX_STREAMS_PER_KEY`.
const STREAMS_PER_KEY: usize = 20;
/// Runs the read phases; returns how many streams were open for the memory measurement.
pub(crate) async fn run(
    b: &mut Bench,
    query: &ServiceProcess,
    ingest: &ServiceProcess,
    projector: Option<&ServiceProcess>,
) -> anyhow::Result<usize> {
    phase("end to end: POST -> live stream");
    let dashboard = b
        .admin
        .keys(
            b.account,
            "dashboard",
            b.plan.subscribers.div_ceil(STREAMS_PER_KEY),
        )
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
    // Each key may hold at most MAX_STREAMS_PER_KEY streams (default 20), so the streams are
    // spread over enough keys for every one of them to open.
    let dashboard = b
        .admin
        .keys(
            b.account,
            "dashboard",
            b.plan.open_streams.div_ceil(STREAMS_PER_KEY),
        )
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
    let days = b.plan.dataset_chat_days;
    let ids = build_dataset(&b.svc_pool, readers, players, (chat, days), events).await?;
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
    let searched = search_phases::load_players(b).await?;
    let retention = crate::retention::load_account(b).await?;
    let trends = crate::trends::load_account(b).await?;
    let log = server_history(b, readers, &ids).await?;
    let cookies = sign_ins(b, &query.base_url, readers).await?;
    let set = ReadSet {
        base_url: query.base_url.clone(),
        readers,
        players: ids,
        servers: log.servers.clone(),
        searched,
        retention,
        trends,
        cookies,
    };

    // The loads above wrote tens of millions of rows in minutes, which a running service never
    // does just before it is read: their checkpoint is forced here, so the quiet reads do not
    // meet the loads' writes being flushed (the write load's own checkpoints are part of the
    // reads under load).
    sqlx::query("CHECKPOINT").execute(&b.svc_pool).await?;
    // The servers keep sending heartbeats while the dashboard is read, quiet or not.
    let stop = CancellationToken::new();
    let live = log.live_until(b.svc_pool.clone(), stop.clone());
    let (quiet, notes) = set.measure(b, "quiet").await?;
    b.report.measurements.extend(quiet);
    b.report.notes.extend(notes);
    for (name, route) in [
        ("overview", "/api/overview"),
        ("server_chart_30d", "/api/servers/{id}/history"),
    ] {
        if let Some((share, total)) = server_side_within_50ms(&b.http, &query.base_url, route).await
        {
            b.note(
                name,
                format!(
                    "query-api's own histogram: {:.1}% of {total} GET {route} (warm-ups \
                     included) took at most 50 ms in the service",
                    share * 100.0
                ),
            );
        }
    }
    let loaded = under_load::run(b, (query, ingest, projector), &set).await;
    stop.cancel();
    let _ = live.await;
    loaded?;
    Ok(open)
}

/// The readers' servers with per-minute history (the Overview's and server pages' data),
/// folded through the read models, and every player given their name for the header search.
async fn server_history(b: &mut Bench, readers: Uuid, players: &[Uuid]) -> anyhow::Result<Log> {
    let (servers, days) = (b.plan.history_servers, b.plan.history_days);
    phase(&format!(
        "dashboard: {servers} servers with {days} days of per-minute history"
    ));
    b.admin
        .settings(readers, &["admin", "mod"], SYNC_INTERVAL_SECONDS)
        .await?;
    let started = Instant::now();
    let mut log = Log::new(readers, players, servers, days);
    log.build(&b.svc_pool).await?;
    let what = "heartbeats (one a minute per server) with joins, quits and punishments, folded \
                through every read model with the projector's own statements and pruned by its \
                retention, then VACUUM (ANALYZE) (informational)";
    let heartbeats = log.heartbeats;
    let elapsed = started.elapsed();
    let build = Measurement::new(
        "server_history_build",
        what,
        "heartbeats",
        heartbeats,
        elapsed,
        None,
        0,
    );
    b.report.measurements.push(build);
    b.note(
        "server_history_build",
        format!(
            "{} joins, quits and punishments folded beside the heartbeats",
            log.activity
        ),
    );
    let rows = row_counts(&b.svc_pool, readers).await?;
    b.note(
        "server_history_build",
        format!("rows after pruning: {rows}"),
    );
    // The header's player search looks names up in `player_names` (and `players.names`), which
    // the dataset's direct inserts leave empty: give every player their one name.
    sqlx::query(
        "UPDATE players SET names = ARRAY[username] \
         WHERE account_id = $1 AND username IS NOT NULL AND names = '{}'",
    )
    .bind(readers)
    .execute(&b.svc_pool)
    .await?;
    sqlx::query(
        "INSERT INTO player_names (account_id, player_uuid, name, first_seen, last_seen) \
         SELECT account_id, uuid, username, first_seen, last_seen FROM players \
         WHERE account_id = $1 AND username IS NOT NULL ON CONFLICT DO NOTHING",
    )
    .bind(readers)
    .execute(&b.svc_pool)
    .await?;
    sqlx::query("ANALYZE players, player_names")
        .execute(&b.svc_pool)
        .await?;
    Ok(log)
}

/// Sign-in measured (sequential and concurrent), which leaves the session cookies the pages
/// are read with.
async fn sign_ins(b: &mut Bench, base_url: &str, readers: Uuid) -> anyhow::Result<Vec<String>> {
    let (sequential, concurrent, clients) = (
        b.plan.sign_ins,
        b.plan.concurrent_sign_ins,
        b.plan.sign_in_clients,
    );
    let sign_ins = SignIns::for_attempts(WARM_UP + sequential + concurrent);
    for (i, (login, password)) in sign_ins.members.iter().enumerate() {
        let role = if i == 0 { "owner" } else { "moderator" };
        b.admin.member(readers, login, role, password).await?;
    }
    let (measured, cookies) = sign_ins
        .measure(base_url, sequential, concurrent, clients)
        .await?;
    b.report.measurements.extend(measured);
    Ok(cookies)
}
