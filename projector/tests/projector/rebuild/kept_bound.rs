//! A rebuild over a log of more players than it may keep in memory keeps at most its bound
//! (`PROJECTOR_REBUILD_KEPT_PLAYERS`) at any moment, and swaps in what a fresh fold of the
//! same log stores.

use super::{all_models, fold_again, live_caught_up};
use crate::harness::Harness;
use crate::workload::{Workload, assert_same_read_models};
use projector::rebuild::rebuild;
use tokio_util::sync::CancellationToken;

/// Players whose rows the rebuild may keep.
const KEPT: usize = 150;
/// Distinct players in the log: many times the bound.
const PLAYERS: usize = 2_000;
/// Log messages in a rebuild's chunk: many chunks, each naming about a hundred players.
const CHUNK_MESSAGES: usize = 40;

#[tokio::test]
async fn a_rebuild_keeps_no_more_players_than_its_bound_and_equals_a_fresh_fold()
-> anyhow::Result<()> {
    let h = Harness::start_with(|config| {
        config.batch_max = CHUNK_MESSAGES / 2;
        config.rebuild_chunk_messages = CHUNK_MESSAGES;
        config.rebuild_kept_players = KEPT;
    })
    .await?;
    let mut workload = Workload::with_players(PLAYERS);
    let last = workload.publish_records(&h, 30_000).await?;
    live_caught_up(&h).await?;
    let players: i64 = sqlx::query_scalar("SELECT count(*) FROM players")
        .fetch_one(h.pool())
        .await?;
    assert!(
        players >= 4 * KEPT as i64,
        "{players} players in the log: not many times the bound"
    );

    let report = rebuild(&h.config, &all_models(), CancellationToken::new()).await?;
    assert!(report.last_sequence >= last);
    let (rows, spans) = report.kept_peaks;
    eprintln!("kept at most {rows} players rows and {spans} name spans ({PLAYERS} players)");
    assert!(
        rows <= KEPT,
        "{rows} players rows kept at once, bound {KEPT}"
    );
    assert!(rows > 0, "the fold kept rows between its chunks");
    // Spans while fewer than twice the bound are kept, plus one chunk's own (a session batch
    // names two players).
    assert!(
        spans <= 2 * KEPT + 2 * CHUNK_MESSAGES,
        "{spans} name spans kept at once"
    );

    live_caught_up(&h).await?;
    let clean = fold_again(&h).await?;
    assert_same_read_models(h.pool(), &clean.pool).await?;
    Ok(())
}
