//! The network chart's read model (`network_five_minutes`, servers model): one row per account
//! and five-minute bucket holding the game servers' averages summed, proxies left out; kept
//! equal to that sum over `server_five_minutes` as heartbeats arrive, when a server's role
//! changes, on replay and on rebuild; one account's rows never hold another's servers.

use crate::harness::{Harness, logged, table_checksum};
use chrono::{DateTime, Utc};
use projector::projections::ReadModel;
use projector::projections::servers::Servers;
use projector::rebuild::{RebuildOptions, rebuild};
use shared::records::Heartbeat;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

fn at(time: &str) -> DateTime<Utc> {
    format!("2025-03-01T{time}Z")
        .parse()
        .unwrap_or_else(|e| panic!("bad test time {time}: {e}"))
}

fn beat(server: Uuid, time: &str, players: i64, role: &str) -> shared::envelope::Logged<Heartbeat> {
    logged::<Heartbeat>(&format!(
        r#"{{"server_id":"{server}","tps":20,"player_count":{players},"max_players":100,
            "role":"{role}","timestamp":"{}"}}"#,
        at(time).to_rfc3339()
    ))
}

type Row = (DateTime<Utc>, Option<f64>);

async fn network(h: &Harness, account: Uuid) -> anyhow::Result<Vec<Row>> {
    Ok(sqlx::query_as(
        "SELECT bucket, players FROM network_five_minutes WHERE account_id = $1 ORDER BY bucket",
    )
    .bind(account)
    .fetch_all(h.pool())
    .await?)
}

/// The same figures summed from the per-server rollup at read time (what the Overview read
/// before the network model): every account's buckets, proxies (by their role now) left out.
async fn summed_from_rollup(
    h: &Harness,
) -> anyhow::Result<Vec<(Uuid, DateTime<Utc>, Option<f64>)>> {
    Ok(sqlx::query_as(
        "SELECT f.account_id, f.bucket, sum(f.player_count_sum::float8 / f.samples) \
                FILTER (WHERE s.role IS DISTINCT FROM 'proxy') \
         FROM server_five_minutes f \
         LEFT JOIN servers s ON s.account_id = f.account_id AND s.id = f.server_id \
         GROUP BY 1, 2 ORDER BY 1, 2",
    )
    .fetch_all(h.pool())
    .await?)
}

async fn stored(h: &Harness) -> anyhow::Result<Vec<(Uuid, DateTime<Utc>, Option<f64>)>> {
    Ok(
        sqlx::query_as(
            "SELECT account_id, bucket, players FROM network_five_minutes ORDER BY 1, 2",
        )
        .fetch_all(h.pool())
        .await?,
    )
}

#[tokio::test]
async fn the_network_chart_sums_game_servers_per_bucket_and_follows_role_changes()
-> anyhow::Result<()> {
    let h = Harness::start().await?;
    let (account, other) = (Uuid::now_v7(), Uuid::now_v7());
    let (s1, s2, proxy, elsewhere) = (
        Uuid::now_v7(),
        Uuid::now_v7(),
        Uuid::now_v7(),
        Uuid::now_v7(),
    );
    // Bucket 12:00: s1 averages 5 (4 and 6, in two messages, one logged twice), s2 10, the
    // proxy 100 (left out). Bucket 12:05: only the proxy (null). Bucket 12:10: s2 alone, 7.
    h.publish(
        account,
        Utc::now(),
        vec![
            beat(s1, "12:00:10", 4, "server"),
            beat(s2, "12:01:00", 10, "server"),
            beat(proxy, "12:01:00", 100, "proxy"),
        ],
    )
    .await?;
    let retried = beat(s1, "12:03:00", 6, "server");
    h.publish(account, Utc::now(), vec![retried.clone()])
        .await?;
    h.publish(account, Utc::now(), vec![retried]).await?;
    h.publish(
        account,
        Utc::now(),
        vec![
            beat(proxy, "12:06:00", 90, "proxy"),
            beat(s2, "12:11:00", 7, "server"),
        ],
    )
    .await?;
    h.publish(
        other,
        Utc::now(),
        vec![beat(elsewhere, "12:02:00", 1_000, "server")],
    )
    .await?;
    h.caught_up().await?;

    assert_eq!(
        network(&h, account).await?,
        [
            (at("12:00:00"), Some(15.0)),
            (at("12:05:00"), None),
            (at("12:10:00"), Some(7.0)),
        ]
    );
    assert_eq!(
        network(&h, other).await?,
        [(at("12:00:00"), Some(1_000.0))],
        "one account's servers never count in another's chart"
    );
    assert_eq!(stored(&h).await?, summed_from_rollup(&h).await?);

    // The proxy turns out to be a game server: its earlier buckets are summed again.
    h.publish(
        account,
        Utc::now(),
        vec![beat(proxy, "12:12:00", 50, "server")],
    )
    .await?;
    h.caught_up().await?;
    assert_eq!(
        network(&h, account).await?,
        [
            (at("12:00:00"), Some(115.0)),
            (at("12:05:00"), Some(90.0)),
            (at("12:10:00"), Some(57.0)),
        ]
    );
    assert_eq!(stored(&h).await?, summed_from_rollup(&h).await?);

    // A rebuild of the servers model folds the same rows again.
    let before = (
        stored(&h).await?,
        table_checksum(h.pool(), "network_five_minutes").await?,
    );
    let options = RebuildOptions {
        models: vec![&Servers as &dyn ReadModel],
        progress_bar: false,
        progress: None,
    };
    rebuild(&h.config, &options, CancellationToken::new()).await?;
    let after = (
        stored(&h).await?,
        table_checksum(h.pool(), "network_five_minutes").await?,
    );
    assert_eq!(after.0, before.0, "a rebuild changed the network chart");
    assert_eq!(
        after.1.0, before.1.0,
        "a rebuild changed how many network rows there are"
    );
    Ok(())
}
