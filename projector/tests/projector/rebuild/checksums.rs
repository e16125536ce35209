//! Rebuilt tables equal the live projector's: on the replay property's random logs
//! (`replay_property::random_log`: every record kind, duplicates, revokes, legacy subjects,
//! several partitions) with poison messages among them, a rebuild of every model swaps in
//! tables holding exactly the values the live projector folded, and parks what it parked.
//!
//! The poison: a chat line PostgreSQL refuses (NUL), a rank too long for its index (refused
//! by the players model only when the index exists: a load without it must still refuse it),
//! bytes no model can decode, and a log message of an unknown version.

use crate::harness::Harness;
use crate::parking::{chat, over_long_rank};
use crate::replay_property::random_log::{Message, Pools, message};
use crate::replay_property::{PARTITIONS, caught_up, publish, run_case};
use crate::workload::contents;
use chrono::Utc;
use projector::rebuild::{RebuildOptions, rebuild};
use proptest::prelude::*;
use shared::records::RecordKind;
use sqlx::PgPool;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

/// The kinds of poison message.
const POISONS: u8 = 4;

/// Publishes poison message `kind` for `account`.
async fn publish_poison(h: &Harness, account: Uuid, kind: u8) -> anyhow::Result<u64> {
    let (server, player) = (Uuid::from_u128(7), Uuid::from_u128(8));
    let subjects = h.config.common.event_log.subjects();
    match kind % POISONS {
        0 => {
            let lines = vec![chat(server, player, "kept"), chat(server, player, "x\u{0}")];
            h.publish(account, Utc::now(), lines).await
        }
        1 => {
            // A rank for a player the players model holds (a sighting first), so the update
            // reaches the index.
            let huge = over_long_rank(player);
            let sighting = vec![chat(server, player, "sighted")];
            h.publish(account, Utc::now(), sighting).await?;
            h.publish(account, Utc::now(), vec![huge]).await
        }
        2 => {
            let subject = subjects.for_records(account, RecordKind::Custom, Some("x"));
            h.publish_raw(subject, b"\xff\x00 not a log message".to_vec())
                .await
        }
        _ => {
            let subject = subjects.for_records(account, RecordKind::Chat, None);
            let future = format!(r#"{{"v":9,"account_id":"{account}","future":"fields"}}"#);
            h.publish_raw(subject, future.into_bytes()).await
        }
    }
}

/// Every parked row, whole, in order.
async fn parked(pool: &PgPool) -> anyhow::Result<Vec<String>> {
    Ok(sqlx::query_scalar(
        "SELECT p::text FROM parked_messages p ORDER BY stream_sequence, projection",
    )
    .fetch_all(pool)
    .await?)
}

/// Every parked row but when it was parked.
async fn parked_without_time(pool: &PgPool) -> anyhow::Result<Vec<String>> {
    Ok(sqlx::query_scalar(
        "SELECT concat_ws('|', stream_sequence, projection, subject, reason, sqlstate,
                          md5(payload))
         FROM parked_messages ORDER BY stream_sequence, projection",
    )
    .fetch_all(pool)
    .await?)
}

/// Fails unless every read-model table holds the same values as `before`.
async fn ensure_same_tables(
    h: &Harness,
    before: &[(&'static str, i64, String)],
    what: &str,
) -> anyhow::Result<()> {
    let after = contents(h.pool()).await?;
    for (b, a) in before.iter().zip(&after) {
        anyhow::ensure!(
            b == a,
            "{} differs {what}: {} rows live, {} rebuilt",
            b.0,
            b.1,
            a.1
        );
    }
    Ok(())
}

/// Folds `messages` with `poison` (`(before which message, kind)`) live, rebuilds every model,
/// and compares; then rebuilds again with the parked rows gone, so they must come from the
/// rebuild itself.
async fn rebuilt_tables_equal_the_live_fold(
    messages: Vec<Message>,
    poison: Vec<(usize, u8)>,
) -> anyhow::Result<()> {
    let pools = Pools::new(PARTITIONS);
    let h = Harness::start_with(|c| c.common.event_log.partitions = PARTITIONS).await?;
    // Poison for accounts of their own, in whatever partitions they fall.
    let poisoned: Vec<Uuid> = (0..3).map(|_| Uuid::new_v4()).collect();
    for (index, m) in messages.iter().enumerate() {
        for (i, (_, kind)) in poison.iter().enumerate().filter(|(_, p)| p.0 == index) {
            publish_poison(&h, poisoned[i % poisoned.len()], *kind).await?;
        }
        publish(&h, &pools.build(index, m), m.legacy).await?;
        if m.settle {
            caught_up(&h).await?;
        }
    }
    caught_up(&h).await?;
    let live = contents(h.pool()).await?;
    let parked_live = parked(h.pool()).await?;
    anyhow::ensure!(
        parked_live.len() >= poison.len(),
        "{} poison messages, {} parked rows: {parked_live:?}",
        poison.len(),
        parked_live.len()
    );

    let all = RebuildOptions::default();
    rebuild(&h.config, &all, CancellationToken::new()).await?;
    ensure_same_tables(&h, &live, "after a rebuild").await?;
    anyhow::ensure!(
        parked(h.pool()).await? == parked_live,
        "the parked rows changed"
    );

    let expected = parked_without_time(h.pool()).await?;
    sqlx::query("DELETE FROM parked_messages")
        .execute(h.pool())
        .await?;
    rebuild(&h.config, &all, CancellationToken::new()).await?;
    ensure_same_tables(&h, &live, "after a rebuild that parked anew").await?;
    let reparked = parked_without_time(h.pool()).await?;
    anyhow::ensure!(
        reparked == expected,
        "the rebuild parked {reparked:?}, the live projector {expected:?}"
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 4,
        // Each case runs a nats-server, a database, the projector and two rebuilds.
        max_shrink_iters: 16,
        ..ProptestConfig::default()
    })]

    #[test]
    fn rebuilt_tables_equal_the_live_projectors_with_poison_parked(
        messages in proptest::collection::vec(message(), 5..30),
        at in proptest::collection::vec(0..30usize, usize::from(POISONS)..8),
    ) {
        // Every kind of poison at least once, each before some message.
        let poison: Vec<(usize, u8)> = at
            .into_iter()
            .zip((0..POISONS).cycle())
            .map(|(at, kind)| (at % messages.len(), kind))
            .collect();
        run_case(rebuilt_tables_equal_the_live_fold(messages, poison))?;
    }
}
