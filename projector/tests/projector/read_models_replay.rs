//! Resetting every checkpoint to 0 and re-running the log leaves the players, servers and
//! sessions tables byte-identical (row versions and places included).

use crate::harness::{Harness, logged, logged_as, table_checksum};
use chrono::{DateTime, Duration, Utc};
use shared::records::{
    AccountLink, AnticheatFlag, ChatEntry, Heartbeat, Punishment, RankChange, Session,
};
use uuid::Uuid;

const TABLES: [&str; 9] = [
    "players",
    "servers",
    "server_samples",
    "server_minutes",
    "server_five_minutes",
    "server_hours",
    "network_five_minutes",
    "sessions",
    "session_server_heartbeats",
];

async fn checksums(h: &Harness) -> anyhow::Result<Vec<(i64, String)>> {
    let mut sums = Vec::new();
    for table in TABLES {
        sums.push(table_checksum(h.pool(), table).await?);
    }
    Ok(sums)
}

/// A mixed log: two accounts, joins, switches, quits, heartbeats with a gap and a shutdown,
/// chat, punishments, flags, rank changes and links; some records logged twice, some late.
async fn publish_mixed_log(h: &Harness) -> anyhow::Result<()> {
    let base: DateTime<Utc> = "2025-03-01T10:00:00Z".parse()?;
    let t = |seconds: i64| (base + Duration::seconds(seconds)).to_rfc3339();
    for account in [Uuid::now_v7(), Uuid::now_v7()] {
        let [s1, s2] = [Uuid::now_v7(), Uuid::now_v7()];
        let players: Vec<Uuid> = (0..4).map(|_| Uuid::now_v7()).collect();
        for round in 0..6_i64 {
            let now = round * 20;
            let beats: Vec<_> = [s1, s2]
                .iter()
                .map(|s| {
                    logged::<Heartbeat>(&format!(
                        r#"{{"server_id":"{s}","tps":{},"player_count":{round},"max_players":20,
                            "name":"srv","timestamp":"{}"}}"#,
                        19.0 + round as f64 / 10.0,
                        t(now)
                    ))
                })
                .collect();
            h.publish(account, Utc::now(), beats.clone()).await?;
            if round == 2 {
                h.publish(account, Utc::now(), beats).await?;
            }
            let sessions: Vec<_> = players
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let (server, event) = match (round + i as i64) % 3 {
                        0 => (s1, "join"),
                        1 => (s2, "join"),
                        _ => (s2, "quit"),
                    };
                    logged_as::<Session>(
                        Uuid::now_v7(),
                        &format!(
                            r#"{{"server_id":"{server}","player_uuid":"{p}","player_name":"n{round}",
                                "event":"{event}","at":"{}"}}"#,
                            t(now + 1 + i as i64)
                        ),
                    )
                })
                .collect();
            h.publish(account, Utc::now(), sessions).await?;
        }
        // s1 goes silent past 3 x 15 s, then comes back; s2 shuts down gracefully.
        h.publish(
            account,
            Utc::now(),
            vec![
                logged::<Heartbeat>(&format!(
                    r#"{{"server_id":"{s1}","tps":20,"player_count":0,"max_players":20,"timestamp":"{}"}}"#,
                    t(400)
                )),
                logged::<Heartbeat>(&format!(
                    r#"{{"server_id":"{s2}","tps":20,"player_count":0,"max_players":20,"online":false,
                        "timestamp":"{}"}}"#,
                    t(401)
                )),
            ],
        )
        .await?;
        let (p, q) = (players[0], players[1]);
        h.publish(account, Utc::now(), vec![logged::<ChatEntry>(&format!(
            r#"{{"server_id":"{s1}","player_uuid":"{p}","player_name":"Chatty","entry_type":"chat",
                "message":"hi","sent_at":"{}"}}"#,
            t(50)
        ))])
        .await?;
        h.publish(
            account,
            Utc::now(),
            vec![logged::<Punishment>(&format!(
                r#"{{"server_id":"{s1}","player_uuid":"{q}","type":"mute","staff_uuid":"{p}",
                "issued_at":"{}"}}"#,
                t(60)
            ))],
        )
        .await?;
        h.publish(account, Utc::now(), vec![logged::<AnticheatFlag>(&format!(
            r#"{{"server_id":"{s2}","player_uuid":"{q}","player_name":"Flagged","check_name":"Fly",
                "violation_level":3,"flagged_at":"{}"}}"#,
            t(5)
        ))])
        .await?;
        let ranks = [("set", "member", 10), ("add", "vip", 20), ("remove", "vip", 20), ("set", "mod", 15)]
            .map(|(action, group, s)| {
                logged::<RankChange>(&format!(
                    r#"{{"player_uuid":"{p}","action":"{action}","group":"{group}","changed_at":"{}"}}"#,
                    t(s)
                ))
            });
        h.publish(account, Utc::now(), ranks.to_vec()).await?;
        let links = [("link", "1", 10), ("unlink", "1", 30), ("link", "2", 20)].map(|(action, id, s)| {
            logged::<AccountLink>(&format!(
                r#"{{"player_uuid":"{q}","platform":"discord","external_id":"{id}","action":"{action}",
                    "at":"{}"}}"#,
                t(s)
            ))
        });
        h.publish(account, Utc::now(), links.to_vec()).await?;
    }
    Ok(())
}

#[tokio::test]
async fn replaying_from_zero_leaves_players_servers_and_sessions_byte_identical()
-> anyhow::Result<()> {
    let mut h = Harness::start().await?;
    publish_mixed_log(&h).await?;
    let last = h.caught_up().await?;
    let before = checksums(&h).await?;
    let counts: Vec<i64> = before.iter().map(|c| c.0).collect();
    assert!(
        counts.iter().all(|&n| n > 0),
        "every table has rows: {counts:?}"
    );
    let closed_by: Vec<String> = sqlx::query_scalar(
        "SELECT DISTINCT closed_by FROM sessions WHERE closed_by IS NOT NULL ORDER BY 1",
    )
    .fetch_all(h.pool())
    .await?;
    assert_eq!(closed_by, ["quit", "server_offline", "switched"]);

    h.stop_projector().await?;
    sqlx::query("UPDATE projection_checkpoints SET last_sequence = 0")
        .execute(h.pool())
        .await?;
    h.start_projector().await?;
    h.caught_up_to(last).await?;
    let after = checksums(&h).await?;
    for ((table, before), after) in TABLES.iter().zip(&before).zip(&after) {
        assert_eq!(before, after, "{table} changed on replay");
    }
    Ok(())
}
