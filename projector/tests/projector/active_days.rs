//! The active_days model (for retention): UTC days, per-cohort counts, a late earlier
//! record moving a player's days to an earlier cohort, a record logged twice rewriting nothing,
//! and `rebuild --model active_days` restoring all four tables row for row.

use crate::harness::{Harness, logged, table_checksum};
use crate::workload::every_checkpoint_at;
use chrono::{NaiveDate, Utc};
use projector::projections::{self, ReadModel};
use projector::rebuild::{RebuildOptions, rebuild};
use shared::envelope::Logged;
use shared::records::{ChatEntry, Punishment, Session};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

fn day(text: &str) -> NaiveDate {
    text.parse()
        .unwrap_or_else(|e| panic!("bad test day {text}: {e}"))
}

fn session(server: Uuid, player: Uuid, event: &str, at: &str) -> Logged<Session> {
    logged(&format!(
        r#"{{"server_id":"{server}","player_uuid":"{player}","player_name":"P",
            "event":"{event}","at":"{at}"}}"#
    ))
}

type DayRow = (Uuid, NaiveDate);
type SpanRow = (Uuid, NaiveDate, NaiveDate);
type CountRow = (NaiveDate, i32, i64);

const TABLES: [&str; 4] = [
    "player_active_days",
    "player_activity",
    "cohort_returns",
    "cohort_spans",
];

async fn days(h: &Harness, account: Uuid) -> anyhow::Result<Vec<DayRow>> {
    Ok(sqlx::query_as(
        "SELECT player_uuid, day FROM player_active_days
         WHERE account_id = $1 ORDER BY player_uuid, day",
    )
    .bind(account)
    .fetch_all(h.pool())
    .await?)
}

/// (cohort, N, players) of `cohort_returns` or `cohort_spans`.
async fn counts(h: &Harness, table: &str, account: Uuid) -> anyhow::Result<Vec<CountRow>> {
    let column = if table == "cohort_spans" {
        "span"
    } else {
        "day_number"
    };
    Ok(sqlx::query_as(&format!(
        "SELECT first_day, {column}, players FROM {table}
         WHERE account_id = $1 ORDER BY first_day, {column}"
    ))
    .bind(account)
    .fetch_all(h.pool())
    .await?)
}

/// The counts recomputed from the days and spans: what the fold keeps must always equal them.
async fn counts_match_the_days(h: &Harness) -> anyhow::Result<()> {
    for (table, recomputed) in [
        (
            "cohort_returns",
            "SELECT d.account_id, a.first_day, d.day - a.first_day AS n, count(*) AS players
             FROM player_active_days d JOIN player_activity a USING (account_id, player_uuid)
             GROUP BY 1, 2, 3",
        ),
        (
            "cohort_spans",
            "SELECT account_id, first_day, last_day - first_day AS n, count(*) AS players
             FROM player_activity GROUP BY 1, 2, 3",
        ),
    ] {
        let column = if table == "cohort_spans" {
            "span"
        } else {
            "day_number"
        };
        let differ: i64 = sqlx::query_scalar(&format!(
            "SELECT count(*) FROM (
                 (SELECT account_id, first_day, {column}, players FROM {table}
                  EXCEPT {recomputed})
                 UNION ALL
                 ({recomputed} EXCEPT
                  SELECT account_id, first_day, {column}, players FROM {table})) AS x"
        ))
        .fetch_one(h.pool())
        .await?;
        assert_eq!(differ, 0, "{table} differs from its days");
    }
    Ok(())
}

async fn checksums(h: &Harness) -> anyhow::Result<Vec<String>> {
    let mut sums = Vec::new();
    for table in TABLES {
        sums.push(format!("{:?}", table_checksum(h.pool(), table).await?));
    }
    Ok(sums)
}

async fn spans(h: &Harness, account: Uuid) -> anyhow::Result<Vec<SpanRow>> {
    Ok(sqlx::query_as(
        "SELECT player_uuid, first_day, last_day FROM player_activity
         WHERE account_id = $1 ORDER BY player_uuid",
    )
    .bind(account)
    .fetch_all(h.pool())
    .await?)
}

#[tokio::test]
async fn cohort_counts_follow_the_days_replays_change_nothing_and_a_rebuild_restores_them()
-> anyhow::Result<()> {
    let h = Harness::start().await?;
    let (account, other, server) = (Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7());
    // Ordered so that p sorts before q.
    let (p, q) = (Uuid::from_u128(1), Uuid::from_u128(2));
    let join = session(server, p, "join", "2025-03-01T23:59:00Z");
    h.publish(
        account,
        Utc::now(),
        vec![
            join.clone(),
            session(server, p, "quit", "2025-03-02T00:01:00Z"),
            session(server, p, "join", "2025-03-08T10:00:00Z"),
            session(server, p, "quit", "2025-03-08T11:00:00Z"),
        ],
    )
    .await?;
    // A chat line is activity; a punishment (staff can punish an offline player) is not.
    h.publish(
        account,
        Utc::now(),
        vec![logged::<ChatEntry>(&format!(
            r#"{{"server_id":"{server}","player_uuid":"{q}","entry_type":"chat",
                "message":"hi","sent_at":"2025-03-05T12:00:00Z"}}"#
        ))],
    )
    .await?;
    h.publish(
        account,
        Utc::now(),
        vec![logged::<Punishment>(&format!(
            r#"{{"server_id":"{server}","player_uuid":"{q}","type":"ban",
                "reason":"x","issued_at":"2025-03-01T12:00:00Z"}}"#
        ))],
    )
    .await?;
    h.publish(
        other,
        Utc::now(),
        vec![session(server, p, "join", "2025-03-03T10:00:00Z")],
    )
    .await?;
    let last = h.caught_up().await?;
    every_checkpoint_at(h.pool(), last).await?;
    assert_eq!(
        days(&h, account).await?,
        [
            (p, day("2025-03-01")),
            (p, day("2025-03-02")),
            (p, day("2025-03-08")),
            (q, day("2025-03-05")),
        ]
    );
    assert_eq!(
        counts(&h, "cohort_returns", account).await?,
        [
            (day("2025-03-01"), 0, 1),
            (day("2025-03-01"), 1, 1),
            (day("2025-03-01"), 7, 1),
            (day("2025-03-05"), 0, 1),
        ]
    );
    assert_eq!(
        counts(&h, "cohort_spans", account).await?,
        [(day("2025-03-01"), 7, 1), (day("2025-03-05"), 0, 1)]
    );
    assert_eq!(
        spans(&h, account).await?,
        [
            (p, day("2025-03-01"), day("2025-03-08")),
            (q, day("2025-03-05"), day("2025-03-05")),
        ]
    );
    assert_eq!(days(&h, other).await?, [(p, day("2025-03-03"))]);
    assert_eq!(
        counts(&h, "cohort_returns", other).await?,
        [(day("2025-03-03"), 0, 1)]
    );

    counts_match_the_days(&h).await?;

    // Logged again: no row rewritten, counts included.
    let before = checksums(&h).await?;
    h.publish(account, Utc::now(), vec![join]).await?;
    let last = h.caught_up().await?;
    every_checkpoint_at(h.pool(), last).await?;
    assert_eq!(checksums(&h).await?, before);

    // A late batch from before q's first day: q's cohort moves, and its counts with it (the
    // 03-05 cohort is empty now: its rows are gone, not 0).
    h.publish(
        account,
        Utc::now(),
        vec![session(server, q, "join", "2025-03-02T09:00:00Z")],
    )
    .await?;
    let last = h.caught_up().await?;
    every_checkpoint_at(h.pool(), last).await?;
    let expected_days = days(&h, account).await?;
    assert_eq!(expected_days.len(), 5);
    let expected_spans = spans(&h, account).await?;
    assert_eq!(expected_spans[1], (q, day("2025-03-02"), day("2025-03-05")));
    let expected_returns = vec![
        (day("2025-03-01"), 0, 1),
        (day("2025-03-01"), 1, 1),
        (day("2025-03-01"), 7, 1),
        (day("2025-03-02"), 0, 1),
        (day("2025-03-02"), 3, 1),
    ];
    assert_eq!(
        counts(&h, "cohort_returns", account).await?,
        expected_returns
    );
    let expected_spans_counts = vec![(day("2025-03-01"), 7, 1), (day("2025-03-02"), 3, 1)];
    assert_eq!(
        counts(&h, "cohort_spans", account).await?,
        expected_spans_counts
    );

    counts_match_the_days(&h).await?;

    // A rebuild of this model alone replays the log in order: the same rows.
    let options = RebuildOptions {
        models: vec![&projections::active_days::ActiveDays as &dyn ReadModel],
        progress_bar: false,
        progress: None,
    };
    let before_rebuild = checksums(&h).await?;
    rebuild(&h.config, &options, CancellationToken::new()).await?;
    assert_ne!(
        checksums(&h).await?,
        before_rebuild,
        "the tables were not rebuilt"
    );
    assert_eq!(days(&h, account).await?, expected_days);
    assert_eq!(spans(&h, account).await?, expected_spans);
    assert_eq!(
        counts(&h, "cohort_returns", account).await?,
        expected_returns
    );
    assert_eq!(
        counts(&h, "cohort_spans", account).await?,
        expected_spans_counts
    );
    assert_eq!(days(&h, other).await?, [(p, day("2025-03-03"))]);
    counts_match_the_days(&h).await?;
    Ok(())
}
