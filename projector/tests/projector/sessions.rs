//! The sessions read model: join/quit pairs, switches, and servers going offline.

use crate::harness::{Harness, logged, logged_as};
use chrono::{DateTime, Utc};
use shared::records::{Heartbeat, Session};
use uuid::Uuid;

fn at(time: &str) -> DateTime<Utc> {
    format!("2025-03-01T{time}Z")
        .parse()
        .unwrap_or_else(|e| panic!("bad test time {time}: {e}"))
}

fn record(server: Uuid, player: Uuid, event: &str, time: &str) -> String {
    format!(
        r#"{{"server_id":"{server}","player_uuid":"{player}","player_name":"p","event":"{event}",
            "client_version":"1.21.4","ip_hash":"hash","at":"{}"}}"#,
        at(time).to_rfc3339()
    )
}

fn join(id: Uuid, server: Uuid, player: Uuid, time: &str) -> shared::envelope::Logged<Session> {
    logged_as(id, &record(server, player, "join", time))
}

fn quit(server: Uuid, player: Uuid, time: &str) -> shared::envelope::Logged<Session> {
    logged(&record(server, player, "quit", time))
}

fn beat(server: Uuid, time: &str, online: bool) -> shared::envelope::Logged<Heartbeat> {
    logged(&format!(
        r#"{{"server_id":"{server}","tps":20,"player_count":1,"max_players":10,"online":{online},
            "timestamp":"{}"}}"#,
        at(time).to_rfc3339()
    ))
}

type Row = (
    Uuid,
    Uuid,
    Uuid,
    DateTime<Utc>,
    Option<DateTime<Utc>>,
    Option<String>,
);

async fn sessions(h: &Harness, account: Uuid) -> anyhow::Result<Vec<Row>> {
    Ok(sqlx::query_as(
        "SELECT id, player_uuid, server_id, joined_at, left_at, closed_by
         FROM sessions WHERE account_id = $1 ORDER BY joined_at, id",
    )
    .bind(account)
    .fetch_all(h.pool())
    .await?)
}

/// (left_at, closed_by) of the session `id`.
async fn ended(
    h: &Harness,
    account: Uuid,
    id: Uuid,
) -> anyhow::Result<(Option<DateTime<Utc>>, Option<String>)> {
    Ok(
        sqlx::query_as("SELECT left_at, closed_by FROM sessions WHERE account_id = $1 AND id = $2")
            .bind(account)
            .bind(id)
            .fetch_one(h.pool())
            .await?,
    )
}

fn closed(time: &str, by: &str) -> (Option<DateTime<Utc>>, Option<String>) {
    (Some(at(time)), Some(by.to_owned()))
}

fn ids<const N: usize>() -> [Uuid; N] {
    std::array::from_fn(|_| Uuid::now_v7())
}

#[tokio::test]
async fn joins_and_quits_pair_up_and_a_quit_without_a_join_does_nothing() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let [account, player, server, other, j1] = ids();
    h.publish(account, Utc::now(), vec![quit(server, player, "09:00:00")])
        .await?;
    h.publish(
        account,
        Utc::now(),
        vec![join(j1, server, player, "10:00:00")],
    )
    .await?;
    // A quit from another server leaves the session open.
    h.publish(account, Utc::now(), vec![quit(other, player, "10:10:00")])
        .await?;
    h.caught_up().await?;
    assert_eq!(ended(&h, account, j1).await?, (None, None));
    h.publish(account, Utc::now(), vec![quit(server, player, "10:30:00")])
        .await?;
    h.caught_up().await?;

    let rows = sessions(&h, account).await?;
    assert_eq!(rows.len(), 1);
    assert_eq!(
        rows[0],
        (
            j1,
            player,
            server,
            at("10:00:00"),
            Some(at("10:30:00")),
            Some("quit".to_owned())
        )
    );
    let (client_version, ip_hash): (Option<String>, Option<String>) =
        sqlx::query_as("SELECT client_version, ip_hash FROM sessions WHERE id = $1")
            .bind(j1)
            .fetch_one(h.pool())
            .await?;
    assert_eq!(client_version.as_deref(), Some("1.21.4"));
    assert_eq!(ip_hash.as_deref(), Some("hash"));
    Ok(())
}

#[tokio::test]
async fn switching_servers_and_rejoining_close_the_open_session() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let [account, player, s1, s2, j1, j2, j3] = ids();
    h.publish(
        account,
        Utc::now(),
        vec![
            join(j1, s1, player, "10:00:00"),
            join(j2, s2, player, "10:05:00"),
        ],
    )
    .await?;
    // Rejoining the same server while open, and the same join logged again.
    h.publish(account, Utc::now(), vec![join(j3, s2, player, "10:07:00")])
        .await?;
    h.publish(account, Utc::now(), vec![join(j3, s2, player, "10:09:00")])
        .await?;
    h.caught_up().await?;

    assert_eq!(sessions(&h, account).await?.len(), 3);
    assert_eq!(
        ended(&h, account, j1).await?,
        closed("10:05:00", "switched")
    );
    assert_eq!(
        ended(&h, account, j2).await?,
        closed("10:07:00", "switched")
    );
    assert_eq!(ended(&h, account, j3).await?, (None, None));
    let joined: DateTime<Utc> = sqlx::query_scalar("SELECT joined_at FROM sessions WHERE id = $1")
        .bind(j3)
        .fetch_one(h.pool())
        .await?;
    assert_eq!(joined, at("10:07:00"), "the first logged join is kept");
    Ok(())
}

#[tokio::test]
async fn a_graceful_shutdown_closes_that_servers_sessions() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let [account, p1, p2, s1, s2, j1, j2] = ids();
    h.publish(account, Utc::now(), vec![beat(s1, "10:00:00", true)])
        .await?;
    h.publish(
        account,
        Utc::now(),
        vec![join(j1, s1, p1, "10:00:05"), join(j2, s2, p2, "10:00:06")],
    )
    .await?;
    h.publish(account, Utc::now(), vec![beat(s1, "10:00:10", false)])
        .await?;
    h.caught_up().await?;
    assert_eq!(
        ended(&h, account, j1).await?,
        closed("10:00:10", "server_offline")
    );
    assert_eq!(ended(&h, account, j2).await?, (None, None));
    Ok(())
}

#[tokio::test]
async fn a_heartbeat_gap_closes_at_the_previous_heartbeat() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let [account, p1, p2, server, j1, j2] = ids();
    h.publish(
        account,
        Utc::now(),
        vec![
            beat(server, "10:00:00", true),
            beat(server, "10:00:15", true),
        ],
    )
    .await?;
    h.publish(account, Utc::now(), vec![join(j1, server, p1, "10:00:10")])
        .await?;
    // Silent for far more than 3 x 15 s; p2 joins once it is back, before its heartbeat.
    h.publish(account, Utc::now(), vec![join(j2, server, p2, "10:30:00")])
        .await?;
    h.publish(account, Utc::now(), vec![beat(server, "10:30:05", true)])
        .await?;
    h.caught_up().await?;
    assert_eq!(
        ended(&h, account, j1).await?,
        closed("10:00:15", "server_offline")
    );
    assert_eq!(ended(&h, account, j2).await?, (None, None));
    let last: DateTime<Utc> = sqlx::query_scalar(
        "SELECT last_heartbeat_at FROM session_server_heartbeats
         WHERE account_id = $1 AND server_id = $2",
    )
    .bind(account)
    .bind(server)
    .fetch_one(h.pool())
    .await?;
    assert_eq!(last, at("10:30:05"));
    Ok(())
}

#[tokio::test]
async fn the_accounts_sync_interval_sets_the_gap() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let [account, player, server, j1] = ids();
    sqlx::query("INSERT INTO accounts (id, name) VALUES ($1, 'slow sync')")
        .bind(account)
        .execute(h.pool())
        .await?;
    sqlx::query(
        "INSERT INTO account_settings (account_id, staff_groups, sync_interval_seconds)
         VALUES ($1, '{}', 60)",
    )
    .bind(account)
    .execute(h.pool())
    .await?;
    h.publish(account, Utc::now(), vec![beat(server, "10:00:00", true)])
        .await?;
    h.publish(
        account,
        Utc::now(),
        vec![join(j1, server, player, "10:00:01")],
    )
    .await?;
    // 150 s: more than 3 x 15 s, within 3 x 60 s.
    h.publish(account, Utc::now(), vec![beat(server, "10:02:30", true)])
        .await?;
    h.caught_up().await?;
    assert_eq!(ended(&h, account, j1).await?, (None, None));
    // 190 s after the last one: over 3 x 60 s.
    h.publish(account, Utc::now(), vec![beat(server, "10:05:40", true)])
        .await?;
    h.caught_up().await?;
    assert_eq!(
        ended(&h, account, j1).await?,
        closed("10:02:30", "server_offline")
    );
    Ok(())
}

#[tokio::test]
async fn two_accounts_are_kept_apart() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let [a, b, player, server, other, id] = ids();
    // The same player, server and even join id under two accounts.
    h.publish(a, Utc::now(), vec![join(id, server, player, "10:00:00")])
        .await?;
    h.publish(b, Utc::now(), vec![join(id, server, player, "10:00:00")])
        .await?;
    h.publish(
        b,
        Utc::now(),
        vec![join(Uuid::now_v7(), other, player, "10:01:00")],
    )
    .await?;
    h.publish(a, Utc::now(), vec![beat(server, "10:02:00", false)])
        .await?;
    h.caught_up().await?;
    assert_eq!(
        ended(&h, a, id).await?,
        closed("10:02:00", "server_offline")
    );
    assert_eq!(ended(&h, b, id).await?, closed("10:01:00", "switched"));
    assert_eq!(sessions(&h, a).await?.len(), 1);
    assert_eq!(sessions(&h, b).await?.len(), 2);
    Ok(())
}
