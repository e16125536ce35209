//! The servers model's rollups (migration 0012): min / avg / max per minute, five minutes and
//! hour, each sample counted once, and pruning that never lets a sample count twice.

use crate::harness::{Harness, logged, table_checksum};
use chrono::{DateTime, Utc};
use projector::projections::servers::{prune_rollups, prune_samples};
use shared::records::Heartbeat;
use uuid::Uuid;

fn at(time: &str) -> DateTime<Utc> {
    format!("2025-03-{time}Z")
        .parse()
        .unwrap_or_else(|e| panic!("bad test time {time}: {e}"))
}

fn beat(server: Uuid, time: &str, tps: f64, players: i64) -> shared::envelope::Logged<Heartbeat> {
    logged::<Heartbeat>(&format!(
        r#"{{"server_id":"{server}","tps":{tps},"player_count":{players},"max_players":100,
            "timestamp":"{}"}}"#,
        at(time).to_rfc3339()
    ))
}

/// (start, samples, tps sum, tps min, tps max, players sum, players min, players max).
type Bucket = (DateTime<Utc>, i32, f64, f64, f64, i64, i32, i32);

async fn buckets(
    h: &Harness,
    table: &str,
    time: &str,
    server: Uuid,
) -> anyhow::Result<Vec<Bucket>> {
    Ok(sqlx::query_as(&format!(
        "SELECT {time}, samples, tps_sum, tps_min, tps_max, player_count_sum, player_count_min,
                player_count_max
         FROM {table} WHERE server_id = $1 ORDER BY {time}"
    ))
    .bind(server)
    .fetch_all(h.pool())
    .await?)
}

async fn online_minutes(h: &Harness, server: Uuid) -> anyhow::Result<Vec<(DateTime<Utc>, i32)>> {
    Ok(sqlx::query_as(
        "SELECT hour, online_minutes FROM server_hours WHERE server_id = $1 ORDER BY hour",
    )
    .bind(server)
    .fetch_all(h.pool())
    .await?)
}

const HISTORY: [&str; 5] = [
    "server_samples",
    "server_minutes",
    "server_five_minutes",
    "server_hours",
    "network_five_minutes",
];

async fn history_checksums(h: &Harness) -> anyhow::Result<Vec<(i64, String)>> {
    let mut sums = Vec::new();
    for table in HISTORY {
        sums.push(table_checksum(h.pool(), table).await?);
    }
    Ok(sums)
}

#[tokio::test]
async fn rollups_hold_hand_computed_min_avg_max_and_count_each_sample_once() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let (account, server, other) = (Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7());
    let retried = beat(server, "01T12:00:20", 18.0, 5);
    // Spread over several messages, so minute 12:00 is created by one statement and updated
    // by another, and the hour's online minutes must not count it twice.
    h.publish(
        account,
        Utc::now(),
        vec![beat(server, "01T12:00:05", 20.0, 3)],
    )
    .await?;
    h.publish(
        account,
        Utc::now(),
        vec![retried.clone(), beat(server, "01T12:01:05", 19.0, 4)],
    )
    .await?;
    h.publish(
        account,
        Utc::now(),
        vec![beat(server, "01T12:07:00", 15.0, 10), retried.clone()],
    )
    .await?;
    h.publish(account, Utc::now(), vec![retried.clone(), retried])
        .await?;
    h.publish(
        account,
        Utc::now(),
        vec![
            beat(server, "01T13:02:00", 10.0, 0),
            // Late, but within a day of the latest: history, not status.
            beat(server, "01T11:59:50", 10.0, 1),
            beat(other, "01T12:00:30", 5.0, 50),
        ],
    )
    .await?;
    h.caught_up().await?;

    assert_eq!(
        buckets(&h, "server_minutes", "minute", server).await?,
        [
            (at("01T11:59:00"), 1, 10.0, 10.0, 10.0, 1, 1, 1),
            (at("01T12:00:00"), 2, 38.0, 18.0, 20.0, 8, 3, 5),
            (at("01T12:01:00"), 1, 19.0, 19.0, 19.0, 4, 4, 4),
            (at("01T12:07:00"), 1, 15.0, 15.0, 15.0, 10, 10, 10),
            (at("01T13:02:00"), 1, 10.0, 10.0, 10.0, 0, 0, 0),
        ]
    );
    assert_eq!(
        buckets(&h, "server_five_minutes", "bucket", server).await?,
        [
            (at("01T11:55:00"), 1, 10.0, 10.0, 10.0, 1, 1, 1),
            (at("01T12:00:00"), 3, 57.0, 18.0, 20.0, 12, 3, 5),
            (at("01T12:05:00"), 1, 15.0, 15.0, 15.0, 10, 10, 10),
            (at("01T13:00:00"), 1, 10.0, 10.0, 10.0, 0, 0, 0),
        ]
    );
    assert_eq!(
        buckets(&h, "server_hours", "hour", server).await?,
        [
            (at("01T11:00:00"), 1, 10.0, 10.0, 10.0, 1, 1, 1),
            (at("01T12:00:00"), 4, 72.0, 15.0, 20.0, 22, 3, 10),
            (at("01T13:00:00"), 1, 10.0, 10.0, 10.0, 0, 0, 0),
        ]
    );
    assert_eq!(
        online_minutes(&h, server).await?,
        [
            (at("01T11:00:00"), 1),
            (at("01T12:00:00"), 3),
            (at("01T13:00:00"), 1)
        ]
    );
    assert_eq!(
        buckets(&h, "server_hours", "hour", other).await?,
        [(at("01T12:00:00"), 1, 5.0, 5.0, 5.0, 50, 50, 50)],
        "another server's hour stays apart"
    );

    // The whole log again, record for record: nothing moves in any history table.
    let before = history_checksums(&h).await?;
    h.publish(
        account,
        Utc::now(),
        vec![
            beat(server, "01T12:00:05", 20.0, 3),
            beat(server, "01T12:01:05", 19.0, 4),
        ],
    )
    .await?;
    h.caught_up().await?;
    // Those two are new record ids with the same (server, time): still the same samples.
    assert_eq!(history_checksums(&h).await?, before);
    Ok(())
}

#[tokio::test]
async fn rollups_are_pruned_by_resolution_and_never_counted_twice() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let (account, server) = (Uuid::now_v7(), Uuid::now_v7());
    let old = beat(server, "01T10:00:00", 20.0, 1);
    // Ten days later: minute and five-minute rows of the 1st are past their 8 days.
    let recent = beat(server, "11T10:00:00", 19.0, 2);
    h.publish(account, Utc::now(), vec![old.clone()]).await?;
    h.publish(account, Utc::now(), vec![recent]).await?;
    h.caught_up().await?;
    let mut conn = h.pool().acquire().await?;
    prune_samples(&mut conn).await?;
    prune_rollups(&mut conn).await?;
    let minutes = buckets(&h, "server_minutes", "minute", server).await?;
    assert_eq!(minutes.len(), 1);
    assert_eq!(minutes[0].0, at("11T10:00:00"));
    let fives = buckets(&h, "server_five_minutes", "bucket", server).await?;
    assert_eq!(fives.len(), 1);
    let network: Vec<DateTime<Utc>> =
        sqlx::query_scalar("SELECT bucket FROM network_five_minutes WHERE account_id = $1")
            .bind(account)
            .fetch_all(h.pool())
            .await?;
    assert_eq!(
        network,
        [at("11T10:00:00")],
        "network rows share the five-minute retention"
    );
    assert_eq!(
        buckets(&h, "server_hours", "hour", server).await?,
        [
            (at("01T10:00:00"), 1, 20.0, 20.0, 20.0, 1, 1, 1),
            (at("11T10:00:00"), 1, 19.0, 19.0, 19.0, 2, 2, 2),
        ],
        "hours are kept 400 days"
    );

    // The pruned heartbeat again: too old to sample, so its hour is not counted twice.
    let before = history_checksums(&h).await?;
    h.publish(account, Utc::now(), vec![old]).await?;
    h.caught_up().await?;
    assert_eq!(history_checksums(&h).await?, before);
    Ok(())
}
