//! The servers read model: status from heartbeats, raw samples, per-minute aggregates.

use crate::harness::{Harness, logged, table_checksum};
use chrono::{DateTime, Utc};
use projector::projections::servers::{Servers, prune_samples};
use projector::rebuild::{RebuildOptions, rebuild};
use shared::records::Heartbeat;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

fn at(time: &str) -> DateTime<Utc> {
    format!("2025-03-{time}Z")
        .parse()
        .unwrap_or_else(|e| panic!("bad test time {time}: {e}"))
}

fn heartbeat(server: Uuid, time: &str, tps: f64, players: i64, extra: &str) -> String {
    format!(
        r#"{{"server_id":"{server}","tps":{tps},"player_count":{players},"max_players":100,
            "timestamp":"{}"{extra}}}"#,
        at(time).to_rfc3339()
    )
}

type ServerStatus = (
    Option<String>,
    Option<String>,
    bool,
    Option<f64>,
    Option<i32>,
    Option<i32>,
    Option<f64>,
    Option<f64>,
    DateTime<Utc>,
    DateTime<Utc>,
);

async fn status(h: &Harness, account: Uuid, server: Uuid) -> anyhow::Result<ServerStatus> {
    Ok(sqlx::query_as(
        "SELECT name, version, online_flag, tps, player_count, max_players, memory_used_mb,
                memory_max_mb, first_seen, last_heartbeat_at
         FROM servers WHERE account_id = $1 AND id = $2",
    )
    .bind(account)
    .bind(server)
    .fetch_one(h.pool())
    .await?)
}

type Minute = (DateTime<Utc>, i32, f64, f64, i64, i32);

async fn minutes(h: &Harness, account: Uuid, server: Uuid) -> anyhow::Result<Vec<Minute>> {
    Ok(sqlx::query_as(
        "SELECT minute, samples, tps_sum, tps_min, player_count_sum, player_count_max
         FROM server_minutes WHERE account_id = $1 AND server_id = $2 ORDER BY minute",
    )
    .bind(account)
    .bind(server)
    .fetch_all(h.pool())
    .await?)
}

async fn sample_times(
    h: &Harness,
    account: Uuid,
    server: Uuid,
) -> anyhow::Result<Vec<DateTime<Utc>>> {
    Ok(sqlx::query_scalar(
        "SELECT at FROM server_samples WHERE account_id = $1 AND server_id = $2 ORDER BY at",
    )
    .bind(account)
    .bind(server)
    .fetch_all(h.pool())
    .await?)
}

#[tokio::test]
async fn heartbeats_upsert_the_server_and_count_each_sample_once() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let (account, server, other) = (Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7());
    let first = logged::<Heartbeat>(&heartbeat(
        server,
        "01T12:00:05",
        20.0,
        3,
        r#","name":"Lobby","version":"Paper 1.21.4","memory_used_mb":512,"memory_max_mb":2048"#,
    ));
    let second = logged::<Heartbeat>(&heartbeat(server, "01T12:00:20", 18.0, 5, ""));
    let third = logged::<Heartbeat>(&heartbeat(server, "01T12:01:05", 19.0, 4, ""));
    h.publish(account, Utc::now(), vec![first, second.clone()])
        .await?;
    h.publish(account, Utc::now(), vec![third]).await?;
    // The same heartbeat logged again (a retry), in its own message and inside a batch.
    h.publish(account, Utc::now(), vec![second.clone()]).await?;
    h.publish(account, Utc::now(), vec![second.clone(), second])
        .await?;
    // Late and older: moves first_seen and adds history, but not the status.
    let late = logged::<Heartbeat>(&heartbeat(
        server,
        "01T11:59:50",
        10.0,
        1,
        r#","online":false,"name":"Old name""#,
    ));
    h.publish(account, Utc::now(), vec![late]).await?;
    // Another server of the same account stays apart.
    let elsewhere = logged::<Heartbeat>(&heartbeat(other, "01T12:00:30", 5.0, 50, ""));
    h.publish(account, Utc::now(), vec![elsewhere]).await?;
    h.caught_up().await?;

    let s = status(&h, account, server).await?;
    assert_eq!(s.0.as_deref(), Some("Lobby"));
    assert_eq!(s.1.as_deref(), Some("Paper 1.21.4"));
    assert!(s.2, "online: the newest heartbeat said nothing else");
    assert_eq!((s.3, s.4, s.5), (Some(19.0), Some(4), Some(100)));
    assert_eq!((s.6, s.7), (Some(512.0), Some(2048.0)));
    assert_eq!((s.8, s.9), (at("01T11:59:50"), at("01T12:01:05")));

    assert_eq!(sample_times(&h, account, server).await?.len(), 4);
    assert_eq!(
        minutes(&h, account, server).await?,
        [
            (at("01T11:59:00"), 1, 10.0, 10.0, 1, 1),
            (at("01T12:00:00"), 2, 38.0, 18.0, 8, 5),
            (at("01T12:01:00"), 1, 19.0, 19.0, 4, 4),
        ]
    );
    assert_eq!(
        minutes(&h, account, other).await?,
        [(at("01T12:00:00"), 1, 5.0, 5.0, 50, 50)]
    );
    Ok(())
}

#[tokio::test]
async fn a_graceful_shutdown_marks_the_server_offline() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let (account, server) = (Uuid::now_v7(), Uuid::now_v7());
    let beats = vec![
        logged::<Heartbeat>(&heartbeat(server, "01T12:00:00", 20.0, 2, "")),
        logged::<Heartbeat>(&heartbeat(
            server,
            "01T12:00:15",
            20.0,
            0,
            r#","online":false"#,
        )),
    ];
    h.publish(account, Utc::now(), beats).await?;
    h.caught_up().await?;
    let s = status(&h, account, server).await?;
    assert!(!s.2);
    assert_eq!(s.9, at("01T12:00:15"));
    Ok(())
}

#[tokio::test]
async fn samples_are_pruned_a_day_behind_and_never_counted_twice() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let (account, server) = (Uuid::now_v7(), Uuid::now_v7());
    let old = logged::<Heartbeat>(&heartbeat(server, "01T10:00:00", 20.0, 1, ""));
    let recent = logged::<Heartbeat>(&heartbeat(server, "02T11:00:00", 20.0, 2, ""));
    h.publish(account, Utc::now(), vec![old.clone(), recent])
        .await?;
    h.caught_up().await?;
    // Apply may or may not have pruned yet (at most once a minute per process); now it has.
    let mut conn = h.pool().acquire().await?;
    prune_samples(&mut conn).await?;
    assert_eq!(
        sample_times(&h, account, server).await?,
        [at("02T11:00:00")]
    );
    let history = minutes(&h, account, server).await?;
    assert_eq!(history.len(), 2, "the minute history is kept");
    let minutes_before = table_checksum(h.pool(), "server_minutes").await?;

    // The pruned heartbeat again, and a late one more than a day behind: neither is sampled
    // nor counted.
    let too_late = logged::<Heartbeat>(&heartbeat(server, "01T09:00:00", 20.0, 1, ""));
    h.publish(account, Utc::now(), vec![old, too_late]).await?;
    h.caught_up().await?;
    assert_eq!(
        table_checksum(h.pool(), "server_minutes").await?,
        minutes_before
    );
    assert_eq!(
        sample_times(&h, account, server).await?,
        [at("02T11:00:00")]
    );
    assert_eq!(
        status(&h, account, server).await?.8,
        at("01T09:00:00"),
        "still seen"
    );
    Ok(())
}

/// Each server's role, by id.
async fn roles(h: &Harness, account: Uuid) -> anyhow::Result<Vec<(Uuid, String)>> {
    Ok(
        sqlx::query_as("SELECT id, role FROM servers WHERE account_id = $1 ORDER BY id")
            .bind(account)
            .fetch_all(h.pool())
            .await?,
    )
}

#[tokio::test]
async fn a_proxys_role_is_stored_and_kept_by_a_replay_and_a_rebuild() -> anyhow::Result<()> {
    let mut h = Harness::start().await?;
    let account = Uuid::now_v7();
    // Ids in order, so `roles` lists them in this order.
    let (proxy, lobby, was_proxy) = (Uuid::from_u128(1), Uuid::from_u128(2), Uuid::from_u128(3));
    let proxy_beat = |time| heartbeat(proxy, time, 20.0, 9, r#","role":"proxy""#);
    h.publish(
        account,
        Utc::now(),
        vec![
            logged::<Heartbeat>(&proxy_beat("01T12:00:00")),
            logged::<Heartbeat>(&heartbeat(lobby, "01T12:00:00", 20.0, 5, "")),
            logged::<Heartbeat>(&heartbeat(
                was_proxy,
                "01T12:00:00",
                20.0,
                4,
                r#","role":"proxy""#,
            )),
        ],
    )
    .await?;
    // The proxy again without a role but older (late): still a proxy. The third server's
    // newer heartbeat names no role: a game server now.
    h.publish(
        account,
        Utc::now(),
        vec![
            logged::<Heartbeat>(&heartbeat(proxy, "01T11:59:00", 20.0, 9, "")),
            logged::<Heartbeat>(&proxy_beat("01T12:00:15")),
            logged::<Heartbeat>(&heartbeat(
                lobby,
                "01T12:00:15",
                20.0,
                5,
                r#","role":"server""#,
            )),
            logged::<Heartbeat>(&heartbeat(
                was_proxy,
                "01T12:00:15",
                20.0,
                4,
                r#","role":null"#,
            )),
        ],
    )
    .await?;
    let last = h.caught_up().await?;
    let expected = vec![
        (proxy, "proxy".to_owned()),
        (lobby, "server".to_owned()),
        (was_proxy, "server".to_owned()),
    ];
    assert_eq!(roles(&h, account).await?, expected);

    // Replayed from the start of the log.
    h.stop_projector().await?;
    sqlx::query("UPDATE projection_checkpoints SET last_sequence = 0")
        .execute(h.pool())
        .await?;
    h.start_projector().await?;
    h.caught_up_to(last).await?;
    assert_eq!(roles(&h, account).await?, expected, "after a replay");

    // Rebuilt into fresh tables and swapped in.
    let options = RebuildOptions {
        models: vec![&Servers],
        progress_bar: false,
        progress: None,
    };
    rebuild(&h.config, &options, CancellationToken::new()).await?;
    assert_eq!(roles(&h, account).await?, expected, "after a rebuild");
    Ok(())
}
