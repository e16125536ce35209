//! The replay property, per partition: folding a log partition by
//! partition (one reader per partition, each with its own checkpoints) gives the same tables
//! as folding the same log in one partition, in log order; and applying any prefix of each
//! partition again (each partition's checkpoints rewound to a random point of its own) leaves
//! every read model unchanged.

pub(crate) mod random_log;

use crate::harness::{DEADLINE, Harness, eventually, table_checksum};
use proptest::prelude::*;
use random_log::{Message, Pools, message};
use shared::envelope::{LogMessage, RecordBatch};
use sqlx::PgPool;

/// The partitions of the log folded per partition (a new stream's default).
pub(crate) const PARTITIONS: u16 = shared::subjects::DEFAULT_PARTITIONS;

/// Publishes `message` on its subject, in the legacy form when `legacy`; returns its stream
/// sequence.
pub(crate) async fn publish(
    h: &Harness,
    message: &LogMessage,
    legacy: bool,
) -> anyhow::Result<u64> {
    let name = match &message.batch {
        RecordBatch::Custom(records) => records.first().map(|r| r.record.name.clone()),
        _ => None,
    };
    let (log, account, kind) = (
        &h.config.common.event_log,
        message.account_id,
        message.kind(),
    );
    let subject = if legacy {
        let legacy = format!("{}.ev.{account}.{}", log.subject_prefix, kind.as_str());
        name.map_or(legacy.clone(), |name| format!("{legacy}.{name}"))
    } else {
        log.subjects().for_records(account, kind, name.as_deref())
    };
    h.publish_raw(subject, message.encode()).await
}

/// Waits until every partition's checkpoints reach that partition's head; returns the heads.
pub(crate) async fn caught_up(h: &Harness) -> anyhow::Result<Vec<u64>> {
    let stream = h.js.get_stream(&h.config.common.event_log.stream).await?;
    let subjects = h.config.common.event_log.subjects();
    let heads = shared::nats::partition_heads(&stream, &subjects).await?;
    eventually(
        &format!("every partition's checkpoints at {heads:?}"),
        || {
            let (pool, heads) = (h.pool(), &heads);
            async move { Ok(test_support::caught_up(pool, heads).await?.then_some(())) }
        },
    )
    .await?;
    Ok(heads)
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

/// Fails unless `b` and `a` hold the same values; with `versions`, unless the tables that
/// never rewrite a row also kept every row version.
fn ensure_same(b: &[TableSum], a: &[TableSum], versions: bool, what: &str) -> anyhow::Result<()> {
    for (b, a) in b.iter().zip(a) {
        anyhow::ensure!(
            (b.rows, &b.values) == (a.rows, &a.values),
            "{} differs {what}: {} rows before, {} after",
            b.table,
            b.rows,
            a.rows
        );
        anyhow::ensure!(
            !versions || b.versions == a.versions || !NEVER_REWRITTEN.contains(&b.table),
            "{} rows were rewritten (same values) {what}",
            b.table
        );
    }
    Ok(())
}

/// Folds `messages` per partition and in one partition and compares them, then rewinds each
/// partition's checkpoints to `rewinds[k]` of the way to its head, applies the rest again,
/// and checks nothing changed.
async fn a_partitioned_fold_equals_the_whole_log_and_replays_unchanged(
    messages: Vec<Message>,
    rewinds: Vec<f64>,
) -> anyhow::Result<()> {
    let pools = Pools::new(PARTITIONS);
    let mut h = Harness::start_with(|c| c.common.event_log.partitions = PARTITIONS).await?;
    // The same log in one partition: one reader folds every account's messages in log order.
    let whole = Harness::start_with(|c| c.common.event_log.partitions = 1).await?;
    for (index, m) in messages.iter().enumerate() {
        let message = pools.build(index, m);
        publish(&h, &message, m.legacy).await?;
        publish(&whole, &message, m.legacy).await?;
        if m.settle {
            caught_up(&h).await?;
            caught_up(&whole).await?;
        }
    }
    let heads = caught_up(&h).await?;
    caught_up(&whole).await?;
    let before = checksums(h.pool()).await?;
    let in_order = checksums(whole.pool()).await?;
    ensure_same(
        &in_order,
        &before,
        false,
        "between the log folded in one partition and per partition",
    )?;
    drop(whole);

    h.stop_projector().await?;
    // Each partition rewound on its own, by at least its last message.
    let rewound: Vec<i64> = heads
        .iter()
        .enumerate()
        .map(|(k, head)| {
            let at = (*head as f64 * rewinds[k % rewinds.len()]) as u64;
            at.min(head.saturating_sub(1)) as i64
        })
        .collect();
    sqlx::query(
        "UPDATE projection_checkpoints c SET last_sequence = r.at
         FROM UNNEST($1::bigint[]) WITH ORDINALITY AS r(at, k)
         WHERE c.log_partition = r.k - 1",
    )
    .bind(&rewound)
    .execute(h.pool())
    .await?;
    h.start_projector().await?;
    caught_up(&h).await?;
    let after = checksums(h.pool()).await?;
    ensure_same(
        &before,
        &after,
        true,
        &format!("when each partition was applied again from {rewound:?} (heads {heads:?})"),
    )
}

/// Runs one property case on a runtime of its own, within twice the harness's deadline; an
/// error or a timeout fails the case.
pub(crate) fn run_case(
    case: impl std::future::Future<Output = anyhow::Result<()>>,
) -> Result<(), TestCaseError> {
    let runtime = tokio::runtime::Runtime::new()
        .map_err(|e| TestCaseError::fail(format!("tokio runtime: {e}")))?;
    // The timer is made inside the runtime: it needs the runtime's clock.
    match runtime.block_on(async { tokio::time::timeout(DEADLINE * 2, case).await }) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(error)) => Err(TestCaseError::fail(format!("{error:#}"))),
        Err(_) => Err(TestCaseError::fail("timed out")),
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 12,
        // Each case runs a nats-server, a database and the projector: shrink, but not forever.
        max_shrink_iters: 32,
        ..ProptestConfig::default()
    })]

    #[test]
    fn folded_per_partition_as_in_order_and_any_prefix_again_changes_nothing(
        messages in proptest::collection::vec(message(), 5..40),
        rewinds in proptest::collection::vec(
            prop_oneof![1 => Just(0.0), 3 => 0.0..1.0f64],
            usize::from(PARTITIONS),
        ),
    ) {
        run_case(a_partitioned_fold_equals_the_whole_log_and_replays_unchanged(messages, rewinds))?;
    }
}
