//! The replay property (issue 3): applying any sequence of log messages, then applying any
//! prefix of it again (every checkpoint rewound to a random point), leaves every read model
//! unchanged.

mod random_log;

use crate::harness::{DEADLINE, Harness, eventually, table_checksum};
use proptest::prelude::*;
use random_log::{Message, Pools, message};
use shared::envelope::{LogMessage, RecordBatch};
use shared::records::RecordKind;
use sqlx::PgPool;

/// Publishes `message` on its subject; returns its stream sequence.
async fn publish(h: &Harness, message: &LogMessage) -> anyhow::Result<u64> {
    let name = match &message.batch {
        RecordBatch::Custom(records) => records.first().map(|r| r.record.name.clone()),
        _ => None,
    };
    let kind: RecordKind = message.kind();
    let subject =
        h.config
            .common
            .event_log
            .subjects()
            .for_records(message.account_id, kind, name.as_deref());
    h.publish_raw(subject, message.encode()).await
}

/// Waits until every read model's checkpoint reaches `sequence`.
async fn all_caught_up_to(pool: &PgPool, sequence: u64) -> anyhow::Result<()> {
    eventually(&format!("every checkpoint to reach {sequence}"), || {
        let pool = pool.clone();
        async move {
            let lowest: Option<i64> =
                sqlx::query_scalar("SELECT min(last_sequence) FROM projection_checkpoints")
                    .fetch_one(&pool)
                    .await?;
            Ok((lowest.unwrap_or(0) >= sequence as i64).then_some(()))
        }
    })
    .await
}

/// Tables whose models never rewrite a row they already hold (inserts `ON CONFLICT DO NOTHING`,
/// updates guarded by "only if not yet revoked"), so even the row versions must not change.
const NEVER_REWRITTEN: [&str; 5] = [
    "events",
    "punishments",
    "punishment_revokes",
    "anticheat_flags",
    "chat_messages",
];

/// What one table looked like.
#[derive(Debug, PartialEq)]
struct TableSum {
    table: &'static str,
    rows: i64,
    /// Digest of every row's text.
    values: String,
    /// Digest of every row's text, version (xmin) and place (ctid).
    versions: String,
}

async fn checksums(pool: &PgPool) -> anyhow::Result<Vec<TableSum>> {
    let mut sums = Vec::new();
    // Every table a registered read model writes.
    for table in projector::projections::tables() {
        // The table names are the models' constants, so formatting them in is safe.
        let (rows, values): (i64, String) = sqlx::query_as(&format!(
            "SELECT count(*), md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), ''))
             FROM {table} t"
        ))
        .fetch_one(pool)
        .await?;
        let (_, versions) = table_checksum(pool, table).await?;
        sums.push(TableSum {
            table,
            rows,
            values,
            versions,
        });
    }
    Ok(sums)
}

/// Applies `messages`, rewinds every checkpoint to `rewind` of the way, applies the rest again,
/// and checks nothing changed.
async fn applying_a_prefix_again_changes_nothing(
    messages: Vec<Message>,
    rewind: f64,
) -> anyhow::Result<()> {
    let mut h = Harness::start().await?;
    let pools = Pools::new();
    let mut last = 0;
    for (index, m) in messages.iter().enumerate() {
        last = publish(&h, &pools.build(index, m)).await?;
        if m.settle {
            all_caught_up_to(h.pool(), last).await?;
        }
    }
    all_caught_up_to(h.pool(), last).await?;
    let before = checksums(h.pool()).await?;

    h.stop_projector().await?;
    let k = ((last as f64 * rewind) as u64).min(last - 1);
    sqlx::query("UPDATE projection_checkpoints SET last_sequence = $1")
        .bind(k as i64)
        .execute(h.pool())
        .await?;
    h.start_projector().await?;
    all_caught_up_to(h.pool(), last).await?;
    let after = checksums(h.pool()).await?;

    for (b, a) in before.iter().zip(&after) {
        let again = format!("applied again from sequence {} of {last}", k + 1);
        anyhow::ensure!(
            (b.rows, &b.values) == (a.rows, &a.values),
            "{} changed when the log was {again}: {} rows before, {} after",
            b.table,
            b.rows,
            a.rows
        );
        anyhow::ensure!(
            b.versions == a.versions || !NEVER_REWRITTEN.contains(&b.table),
            "{} rows were rewritten (same values) when the log was {again}",
            b.table
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 12,
        // Each case runs a nats-server, a database and the projector: shrink, but not forever.
        max_shrink_iters: 32,
        ..ProptestConfig::default()
    })]

    #[test]
    fn any_prefix_applied_again_leaves_every_read_model_unchanged(
        messages in proptest::collection::vec(message(), 5..40),
        rewind in prop_oneof![1 => Just(0.0), 3 => 0.0..1.0f64],
    ) {
        let runtime = tokio::runtime::Runtime::new()
            .map_err(|e| TestCaseError::fail(format!("tokio runtime: {e}")))?;
        let outcome = runtime.block_on(async {
            tokio::time::timeout(
                DEADLINE * 2,
                applying_a_prefix_again_changes_nothing(messages, rewind),
            )
            .await
        });
        match outcome {
            Ok(Ok(())) => {}
            Ok(Err(error)) => return Err(TestCaseError::fail(format!("{error:#}"))),
            Err(_) => return Err(TestCaseError::fail("timed out")),
        }
    }
}
