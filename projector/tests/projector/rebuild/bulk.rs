//! The bulk-mode load: the copy loads unlogged and without most of its indexes,
//! but what the swap puts in place is the live tables' shape exactly (permanent, the same
//! index definitions under the same names, the same statistics targets), and the progress
//! channel follows the phases in order up to done.

use super::live_caught_up;
use crate::harness::{DEADLINE, Harness};
use crate::workload::{Workload, contents};
use projector::rebuild::{Phase, Progress, RebuildOptions, rebuild};
use sqlx::PgPool;
use tokio_util::sync::CancellationToken;

/// A table's persistence (and its TOAST table's), and each index's with its definition.
type Shape = (&'static str, String, Vec<(String, String)>);

/// Every read model table's persistence, and each index's persistence and definition.
async fn shapes(pool: &PgPool) -> anyhow::Result<Vec<Shape>> {
    let mut shapes = Vec::new();
    for table in projector::projections::tables() {
        // The table's, and its TOAST table's (if any) after a slash.
        let persistence: String = sqlx::query_scalar(
            "SELECT c.relpersistence::text || coalesce('/' || t.relpersistence::text, '')
             FROM pg_class c LEFT JOIN pg_class t ON t.oid = c.reltoastrelid
             WHERE c.oid = $1::regclass",
        )
        .bind(format!("public.{table}"))
        .fetch_one(pool)
        .await?;
        let mut indexes: Vec<(String, String)> = sqlx::query_as(
            "SELECT c.relpersistence::text, x.indexdef
             FROM pg_indexes x
             JOIN pg_class c ON c.oid = format('%I.%I', x.schemaname, x.indexname)::regclass
             WHERE x.schemaname = 'public' AND x.tablename = $1",
        )
        .bind(table)
        .fetch_all(pool)
        .await?;
        indexes.sort();
        shapes.push((table, persistence, indexes));
    }
    Ok(shapes)
}

/// The rebuild's copy while it loads: each table's persistence and its indexes (name,
/// definition).
async fn copy_while_loading(
    pool: &PgPool,
) -> anyhow::Result<Vec<(String, String, Vec<(String, String)>)>> {
    let schema: String = sqlx::query_scalar(
        "SELECT nspname::text FROM pg_namespace WHERE nspname LIKE 'rebuild\\_%'",
    )
    .fetch_one(pool)
    .await?;
    let mut copy = Vec::new();
    for table in projector::projections::tables() {
        let persistence: String = sqlx::query_scalar(
            "SELECT relpersistence::text FROM pg_class
             WHERE oid = format('%I.%I', $1, $2)::regclass",
        )
        .bind(&schema)
        .bind(table)
        .fetch_one(pool)
        .await?;
        let indexes: Vec<(String, String)> = sqlx::query_as(
            "SELECT indexname::text, indexdef FROM pg_indexes
             WHERE schemaname = $1 AND tablename = $2",
        )
        .bind(&schema)
        .bind(table)
        .fetch_all(pool)
        .await?;
        copy.push((table.to_owned(), persistence, indexes));
    }
    Ok(copy)
}

/// Every statistics target set on a column of an index of the public schema.
async fn statistics_targets(pool: &PgPool) -> anyhow::Result<Vec<(String, i32, i32)>> {
    Ok(sqlx::query_as(
        "SELECT i.relname::text, a.attnum::int4, a.attstattarget::int4
         FROM pg_attribute a
         JOIN pg_class i ON i.oid = a.attrelid AND i.relkind = 'i'
         JOIN pg_namespace n ON n.oid = i.relnamespace AND n.nspname = 'public'
         WHERE a.attstattarget >= 0
         ORDER BY 1, 2",
    )
    .fetch_all(pool)
    .await?)
}

#[tokio::test]
async fn a_rebuild_swaps_in_permanent_tables_with_the_live_indexes_and_tells_each_phase()
-> anyhow::Result<()> {
    let h = Harness::start().await?;
    let mut workload = Workload::new();
    workload.publish_records(&h, 3_000).await?;
    live_caught_up(&h).await?;
    let shape = shapes(h.pool()).await?;
    let targets = statistics_targets(h.pool()).await?;
    let before = contents(h.pool()).await?;
    // The migrations set some (the trigram and prefix indexes of player names).
    assert!(!targets.is_empty(), "no statistics target to keep");
    for (table, persistence, indexes) in &shape {
        assert!(["p", "p/p"].contains(&persistence.as_str()), "{table}");
        assert!(
            indexes.iter().all(|(p, _)| p == "p"),
            "{table}: {indexes:?}"
        );
    }

    let (sender, mut receiver) = tokio::sync::watch::channel(Progress::default());
    let mut phase = sender.subscribe();
    let seen = tokio::spawn(async move {
        let mut seen = vec![receiver.borrow_and_update().clone()];
        while receiver.changed().await.is_ok() {
            seen.push(receiver.borrow_and_update().clone());
        }
        seen
    });
    let options = RebuildOptions {
        progress: Some(sender),
        ..RebuildOptions::default()
    };
    // Holding account_settings keeps the load's sessions model waiting (a chunk's heartbeats
    // read their accounts' sync intervals), so the copy is looked at while it loads.
    let mut hold = h.pool().begin().await?;
    sqlx::query("LOCK TABLE public.account_settings IN ACCESS EXCLUSIVE MODE")
        .execute(&mut *hold)
        .await?;
    let rebuilding = tokio::spawn({
        let config = h.config.clone();
        async move { rebuild(&config, &options, CancellationToken::new()).await }
    });
    tokio::time::timeout(DEADLINE, phase.wait_for(|p| p.phase == Phase::Load)).await??;
    let loading = copy_while_loading(h.pool()).await?;
    assert_eq!(
        phase.borrow().phase,
        Phase::Load,
        "looked at after the load"
    );
    hold.rollback().await?;
    let report = tokio::time::timeout(DEADLINE, rebuilding).await???;
    let seen = seen.await?;

    // While loading: unlogged, without the fixed-width secondary indexes, with the load
    // indexes, and a guard in place of an index with a text column.
    assert!(loading.iter().all(|(_, p, _)| p == "u"), "{loading:?}");
    let indexes = |table: &str| {
        loading
            .iter()
            .find(|(t, _, _)| t == table)
            .map(|(_, _, i)| i.clone())
            .unwrap_or_default()
    };
    let events = indexes("events");
    assert!(events.iter().any(|(n, _)| n == "events_pkey"), "{events:?}");
    assert!(
        !events.iter().any(|(n, _)| n == "events_account_time_idx"),
        "{events:?}"
    );
    assert!(
        events
            .iter()
            .any(|(n, d)| n == "events_account_name_time_idx" && d.contains("octet_length")),
        "{events:?}"
    );
    let sessions = indexes("sessions");
    assert!(
        sessions
            .iter()
            .any(|(n, d)| n == "sessions_open_by_player_idx" && !d.contains("octet_length")),
        "{sessions:?}"
    );
    assert!(
        !sessions
            .iter()
            .any(|(n, _)| n == "sessions_player_time_idx"),
        "{sessions:?}"
    );

    assert_eq!(
        shapes(h.pool()).await?,
        shape,
        "the swapped-in tables' shape"
    );
    assert_eq!(statistics_targets(h.pool()).await?, targets);
    assert_eq!(
        contents(h.pool()).await?,
        before,
        "what the rebuild swapped in"
    );
    assert_eq!(
        super::leftover_schemas(h.pool()).await?,
        0,
        "the copy's and the retired schemas are dropped"
    );

    // The phases come in order (the channel keeps only the latest, so one may be missed
    // between two looks, never reordered), and the last is done.
    let phases: Vec<Phase> = seen.iter().map(|p| p.phase).collect();
    assert!(phases.is_sorted(), "{phases:?}");
    let last = seen.last().expect("the channel's first value");
    assert_eq!(last.phase, Phase::Done, "{phases:?}");
    assert_eq!(last.eta, Some(std::time::Duration::ZERO));
    assert!(last.elapsed <= report.elapsed, "{last:?} {report:?}");
    assert!(
        last.records >= 3_000 && last.messages > 0,
        "records and messages counted: {last:?}"
    );
    // The load's measure: the copy applied (near enough) the stream's bytes.
    assert!(last.bytes_total > 0, "{last:?}");
    let share = last.bytes as f64 / last.bytes_total as f64;
    assert!((0.98..=1.0).contains(&share), "bytes {share}: {last:?}");
    Ok(())
}
