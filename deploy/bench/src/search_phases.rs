//! The search targets: player search over a large account, chat keyword search
//! over the read dataset (last 7 days and all time), and, with `--only search`, the chat
//! trigram index's cost to the projector on a backlog of its own.

use crate::children::ServiceProcess;
use crate::reads::build_dataset;
use crate::run::{Bench, phase};
use crate::stats::Measurement;
use crate::timed::keys_for;
use crate::{chat_search, index_cost, player_search};
use std::time::Instant;
use uuid::Uuid;

/// Chat keyword search on `readers`' dataset, then player search on an account of its own.
pub(crate) async fn reads(
    b: &mut Bench,
    query: &ServiceProcess,
    readers: Uuid,
) -> anyhow::Result<()> {
    phase("chat keyword search: last 7 days and all time");
    let count = b.plan.chat_searches;
    // Both series use the same keys; each key's share stays under its quota.
    let keys = b
        .admin
        .keys(readers, "dashboard", keys_for(2 * count + 5))
        .await?;
    let found = chat_search::measure(&b.http, &query.base_url, &keys, count).await;
    b.report.measurements.extend(found);

    let players = b.plan.search_players;
    phase(&format!("player search over {players} players"));
    let searched = b.admin.account("bench player search").await?;
    let started = Instant::now();
    let samples = player_search::load(&b.svc_pool, searched, players).await?;
    b.report.measurements.push(Measurement::new(
        "search_players_load",
        "players (30% with a past name in player_names) loaded with generate_series straight \
         into PostgreSQL, then VACUUM (ANALYZE) (informational: the load is not what is measured)",
        "players",
        players as u64,
        started.elapsed(),
        None,
        0,
    ));
    let count = b.plan.reads_per_query;
    let keys = b.admin.keys(searched, "dashboard", keys_for(count)).await?;
    let measured = player_search::measure(&b.http, &query.base_url, &keys, &samples, count).await;
    b.report.measurements.push(measured);
    Ok(())
}

/// `--only search`: the index cost (on its own backlog), the read dataset's players and chat
/// (no events), and the searches.
pub(crate) async fn only(b: &mut Bench, query: &ServiceProcess) -> anyhow::Result<()> {
    index_cost::measure(b).await?;

    phase("read dataset: players and chat lines");
    let readers = b.admin.account("bench reads").await?;
    let started = Instant::now();
    let (players, chat) = (b.plan.dataset_players, b.plan.dataset_chat);
    let days = b.plan.dataset_chat_days;
    build_dataset(&b.svc_pool, readers, players, (chat, days), 0).await?;
    b.report.measurements.push(Measurement::new(
        "dataset_build",
        "players and chat lines UNNEST-inserted into the read-model tables (informational)",
        "rows",
        (players + chat) as u64,
        started.elapsed(),
        None,
        0,
    ));
    reads(b, query, readers).await
}
