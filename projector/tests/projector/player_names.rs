//! `player_names`: every name a player was seen with survives a rename, a record
//! logged twice rewrites nothing, and `rebuild --model players` restores the table.

use crate::harness::{Harness, logged, table_checksum};
use crate::workload::every_checkpoint_at;
use chrono::{DateTime, Utc};
use projector::projections::{self, ReadModel};
use projector::rebuild::{RebuildOptions, rebuild};
use shared::envelope::Logged;
use shared::records::{AnticheatFlag, ChatEntry, Session};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

fn at(time: &str) -> DateTime<Utc> {
    format!("2025-03-01T{time}Z")
        .parse()
        .unwrap_or_else(|e| panic!("bad test time {time}: {e}"))
}

type NameRow = (Uuid, String, DateTime<Utc>, DateTime<Utc>);

async fn names(h: &Harness, account: Uuid) -> anyhow::Result<Vec<NameRow>> {
    Ok(sqlx::query_as(
        "SELECT player_uuid, name, first_seen, last_seen FROM player_names
         WHERE account_id = $1 ORDER BY player_uuid, first_seen, name",
    )
    .bind(account)
    .fetch_all(h.pool())
    .await?)
}

fn join(server: Uuid, player: Uuid, name: &str, time: &str) -> Logged<Session> {
    logged(&format!(
        r#"{{"server_id":"{server}","player_uuid":"{player}","player_name":"{name}",
            "event":"join","at":"{}"}}"#,
        at(time).to_rfc3339()
    ))
}

fn chat(server: Uuid, player: Uuid, name: &str, time: &str) -> Logged<ChatEntry> {
    logged(&format!(
        r#"{{"server_id":"{server}","player_uuid":"{player}","player_name":"{name}",
            "entry_type":"chat","message":"hi","sent_at":"{}"}}"#,
        at(time).to_rfc3339()
    ))
}

#[tokio::test]
async fn a_rename_keeps_both_names_a_replay_changes_nothing_and_a_rebuild_restores_them()
-> anyhow::Result<()> {
    let h = Harness::start().await?;
    let (account, other_account, p, q, server) = (
        Uuid::now_v7(),
        Uuid::now_v7(),
        Uuid::now_v7(),
        Uuid::now_v7(),
        Uuid::now_v7(),
    );
    let old_join = join(server, p, "OldName", "10:00:00");
    h.publish(account, Utc::now(), vec![old_join.clone()])
        .await?;
    h.publish(
        account,
        Utc::now(),
        vec![
            chat(server, p, "OldName", "10:30:00"),
            chat(server, p, "NewName", "11:00:00"),
            // A chat line without a name adds no name.
            logged::<ChatEntry>(&format!(
                r#"{{"server_id":"{server}","player_uuid":"{p}","entry_type":"command",
                    "message":"/spawn","sent_at":"{}"}}"#,
                at("12:00:00").to_rfc3339()
            )),
        ],
    )
    .await?;
    // Logged later but older: widens the old name's span backwards.
    let flag = logged::<AnticheatFlag>(&format!(
        r#"{{"server_id":"{server}","player_uuid":"{p}","player_name":"OldName",
            "check_name":"Reach","violation_level":1,"flagged_at":"{}"}}"#,
        at("09:00:00").to_rfc3339()
    ));
    h.publish(account, Utc::now(), vec![flag]).await?;
    // The same player in another account is that account's own.
    h.publish(
        other_account,
        Utc::now(),
        vec![join(server, p, "Elsewhere", "10:00:00")],
    )
    .await?;
    h.publish(
        account,
        Utc::now(),
        vec![join(server, q, "Someone", "10:00:00")],
    )
    .await?;
    let last = h.caught_up().await?;
    every_checkpoint_at(h.pool(), last).await?;

    assert_eq!(
        names(&h, account)
            .await?
            .into_iter()
            .filter(|r| r.0 == p)
            .collect::<Vec<_>>(),
        vec![
            (p, "OldName".to_owned(), at("09:00:00"), at("10:30:00")),
            (p, "NewName".to_owned(), at("11:00:00"), at("11:00:00")),
        ]
    );
    let (current, all): (Option<String>, Vec<String>) =
        sqlx::query_as("SELECT username, names FROM players WHERE account_id = $1 AND uuid = $2")
            .bind(account)
            .bind(p)
            .fetch_one(h.pool())
            .await?;
    assert_eq!(current.as_deref(), Some("NewName"));
    assert_eq!(
        all,
        ["NewName", "OldName"],
        "players.names: every name, byte order"
    );
    assert_eq!(
        names(&h, other_account).await?,
        vec![(p, "Elsewhere".to_owned(), at("10:00:00"), at("10:00:00"))]
    );

    // The same record logged again rewrites no row (row versions included).
    let before = table_checksum(h.pool(), "player_names").await?;
    let players_before = table_checksum(h.pool(), "players").await?;
    h.publish(account, Utc::now(), vec![old_join]).await?;
    let last = h.caught_up().await?;
    every_checkpoint_at(h.pool(), last).await?;
    assert_eq!(table_checksum(h.pool(), "player_names").await?, before);
    assert_eq!(table_checksum(h.pool(), "players").await?, players_before);

    // A rebuild of the players model alone replays the log into a fresh table: same rows.
    let (account_names, other_names) = (names(&h, account).await?, names(&h, other_account).await?);
    let options = RebuildOptions {
        models: vec![&projections::players::Players as &dyn ReadModel],
        progress_bar: false,
        progress: None,
    };
    rebuild(&h.config, &options, CancellationToken::new()).await?;
    assert_ne!(
        table_checksum(h.pool(), "player_names").await?,
        before,
        "player_names was not rebuilt"
    );
    assert_eq!(names(&h, account).await?, account_names);
    assert_eq!(names(&h, other_account).await?, other_names);
    let indexes: Vec<String> = sqlx::query_scalar(
        "SELECT indexname::text FROM pg_indexes WHERE tablename = 'player_names' ORDER BY 1",
    )
    .fetch_all(h.pool())
    .await?;
    assert_eq!(indexes, ["player_names_pkey", "player_names_prefix_idx"]);
    Ok(())
}
