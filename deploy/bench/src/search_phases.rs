//! The search targets: player search over a large account, chat keyword search
//! over the read dataset (last 7 days and all time), and, with `--only search`, the chat
//! trigram index's cost to the projector on a backlog of its own.

use crate::children::ServiceProcess;
use crate::player_search::Searchable;
use crate::reads::build_dataset;
use crate::run::{Bench, phase};
use crate::stats::Measurement;
use crate::timed::{WARM_UP, keys_for};
use crate::{chat_search, index_cost, player_search};
use std::time::Instant;
use uuid::Uuid;

/// The player search's account, loaded; with what the searches pick from.
pub(crate) async fn load_players(b: &mut Bench) -> anyhow::Result<(Uuid, Searchable)> {
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
    Ok((searched, samples))
}

/// Chat keyword search (last 7 days and all time) on `readers`' dataset.
pub(crate) async fn chat(
    b: &Bench,
    query_url: &str,
    readers: Uuid,
) -> anyhow::Result<Vec<Measurement>> {
    let count = b.plan.chat_searches;
    // Both series use the same keys; each key's share stays under its quota.
    let keys = b
        .admin
        .keys(readers, "dashboard", keys_for(2 * count + WARM_UP))
        .await?;
    Ok(chat_search::measure(&b.http, query_url, &keys, count).await)
}

/// Player search on the account [`load_players`] made.
pub(crate) async fn players(
    b: &Bench,
    query_url: &str,
    (searched, samples): (Uuid, &Searchable),
) -> anyhow::Result<Measurement> {
    let count = b.plan.reads_per_query;
    let keys = b.admin.keys(searched, "dashboard", keys_for(count)).await?;
    Ok(player_search::measure(&b.http, query_url, &keys, samples, count).await)
}

/// `--only search`: the index cost (on its own backlog), the read dataset's players and chat
/// (no events), and the searches.
pub(crate) async fn only(b: &mut Bench, query: &ServiceProcess) -> anyhow::Result<()> {
    index_cost::measure(b).await?;

    phase("read dataset: players and chat lines");
    let readers = b.admin.account("bench reads").await?;
    let started = Instant::now();
    let (dataset_players, dataset_chat) = (b.plan.dataset_players, b.plan.dataset_chat);
    let days = b.plan.dataset_chat_days;
    let dataset = (dataset_chat, days);
    build_dataset(&b.svc_pool, readers, dataset_players, dataset, 0).await?;
    b.report.measurements.push(Measurement::new(
        "dataset_build",
        "players and chat lines UNNEST-inserted into the read-model tables (informational)",
        "rows",
        (dataset_players + dataset_chat) as u64,
        started.elapsed(),
        None,
        0,
    ));
    phase("chat keyword search: last 7 days and all time");
    let found = chat(b, &query.base_url, readers).await?;
    b.report.measurements.extend(found);
    let searched = load_players(b).await?;
    let measured = players(b, &query.base_url, (searched.0, &searched.1)).await?;
    b.report.measurements.push(measured);
    Ok(())
}
