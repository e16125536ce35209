//! The players read model: who each player is, first and last seen, rank and linked account.

use crate::harness::{Harness, logged, table_checksum};
use chrono::{DateTime, Utc};
use shared::records::{
    AccountLink, AnticheatFlag, ChatEntry, CustomEvent, Heartbeat, Punishment, RankChange, Session,
};
use uuid::Uuid;

fn at(time: &str) -> DateTime<Utc> {
    format!("2025-03-01T{time}Z")
        .parse()
        .unwrap_or_else(|e| panic!("bad test time {time}: {e}"))
}

#[derive(Debug, sqlx::FromRow)]
struct Player {
    username: Option<String>,
    username_at: Option<DateTime<Utc>>,
    first_seen: DateTime<Utc>,
    last_seen: DateTime<Utc>,
    rank: Option<String>,
    previous_rank: Option<String>,
    rank_expires_at: Option<DateTime<Utc>>,
    rank_changed_at: Option<DateTime<Utc>>,
    linked_platform: Option<String>,
    linked_external_id: Option<String>,
    linked_external_name: Option<String>,
    linked_at: Option<DateTime<Utc>>,
}

async fn player(h: &Harness, account: Uuid, uuid: Uuid) -> anyhow::Result<Option<Player>> {
    Ok(sqlx::query_as(
        "SELECT username, username_at, first_seen, last_seen, rank, previous_rank,
                rank_expires_at, rank_changed_at, linked_platform, linked_external_id,
                linked_external_name, linked_at
         FROM players WHERE account_id = $1 AND uuid = $2",
    )
    .bind(account)
    .bind(uuid)
    .fetch_optional(h.pool())
    .await?)
}

async fn expect_player(h: &Harness, account: Uuid, uuid: Uuid) -> anyhow::Result<Player> {
    player(h, account, uuid)
        .await?
        .ok_or_else(|| anyhow::anyhow!("no players row for {uuid}"))
}

fn rank(player: Uuid, action: &str, group: &str, extra: &str, time: &str) -> String {
    format!(
        r#"{{"player_uuid":"{player}","action":"{action}","group":"{group}"{extra},
            "changed_at":"{}"}}"#,
        at(time).to_rfc3339()
    )
}

fn link(player: Uuid, action: &str, id: &str, time: &str) -> String {
    format!(
        r#"{{"player_uuid":"{player}","platform":"discord","external_id":"{id}",
            "external_name":"name{id}","action":"{action}","at":"{}"}}"#,
        at(time).to_rfc3339()
    )
}

#[tokio::test]
async fn players_come_from_every_kind_of_record_and_take_the_newest_name() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let (account, player_id, staff, custom_only, server) = (
        Uuid::now_v7(),
        Uuid::now_v7(),
        Uuid::now_v7(),
        Uuid::now_v7(),
        Uuid::now_v7(),
    );
    let received = at("13:00:00");
    let join = format!(
        r#"{{"server_id":"{server}","player_uuid":"{player_id}","player_name":"Old","event":"join",
            "at":"{}"}}"#,
        at("10:00:00").to_rfc3339()
    );
    h.publish(account, received, vec![logged::<Session>(&join)])
        .await?;
    let chat = format!(
        r#"{{"server_id":"{server}","player_uuid":"{player_id}","player_name":"Newest",
            "entry_type":"chat","message":"hi","sent_at":"{}"}}"#,
        at("12:00:00").to_rfc3339()
    );
    h.publish(account, received, vec![logged::<ChatEntry>(&chat)])
        .await?;
    // Logged later but older: must not roll the name back.
    let flag = format!(
        r#"{{"server_id":"{server}","player_uuid":"{player_id}","player_name":"Between",
            "check_name":"Reach","violation_level":1,"flagged_at":"{}"}}"#,
        at("11:00:00").to_rfc3339()
    );
    h.publish(account, received, vec![logged::<AnticheatFlag>(&flag)])
        .await?;
    // The punished player counts; the staff member who issued it does not.
    let ban = format!(
        r#"{{"server_id":"{server}","player_uuid":"{player_id}","type":"ban","staff_uuid":"{staff}",
            "staff_name":"Mod","issued_at":"{}"}}"#,
        at("09:00:00").to_rfc3339()
    );
    h.publish(account, received, vec![logged::<Punishment>(&ban)])
        .await?;
    // No time of its own: the time of receipt.
    let command = format!(
        r#"{{"server_id":"{server}","player_uuid":"{player_id}","entry_type":"command","message":"/spawn"}}"#
    );
    h.publish(account, received, vec![logged::<ChatEntry>(&command)])
        .await?;
    let custom = format!(r#"{{"player_uuid":"{custom_only}","name":"vote"}}"#);
    h.publish(account, received, vec![logged::<CustomEvent>(&custom)])
        .await?;
    let heartbeat =
        format!(r#"{{"server_id":"{server}","tps":20,"player_count":1,"max_players":10}}"#);
    h.publish(account, received, vec![logged::<Heartbeat>(&heartbeat)])
        .await?;
    h.caught_up().await?;

    let p = expect_player(&h, account, player_id).await?;
    assert_eq!(p.username.as_deref(), Some("Newest"));
    assert_eq!(p.username_at, Some(at("12:00:00")));
    assert_eq!(p.first_seen, at("09:00:00"));
    assert_eq!(p.last_seen, received);
    assert!(player(&h, account, staff).await?.is_none(), "staff member");
    assert!(
        player(&h, account, custom_only).await?.is_none(),
        "custom event"
    );
    let rows: i64 = sqlx::query_scalar("SELECT count(*) FROM players WHERE account_id = $1")
        .bind(account)
        .fetch_one(h.pool())
        .await?;
    assert_eq!(rows, 1);
    // Another account's view of the same player is its own row.
    assert!(player(&h, Uuid::now_v7(), player_id).await?.is_none());
    Ok(())
}

#[tokio::test]
async fn ranks_follow_set_add_remove_and_expiry() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let (account, p) = (Uuid::now_v7(), Uuid::now_v7());
    let expires = r#","expires_at":"2025-04-01T00:00:00Z""#;
    h.publish(
        account,
        Utc::now(),
        vec![
            logged::<RankChange>(&rank(p, "set", "member", "", "10:00:00")),
            logged::<RankChange>(&rank(p, "add", "vip", expires, "10:05:00")),
        ],
    )
    .await?;
    h.caught_up().await?;
    let row = expect_player(&h, account, p).await?;
    assert_eq!(row.rank.as_deref(), Some("vip"));
    assert_eq!(row.previous_rank.as_deref(), Some("member"));
    assert_eq!(row.rank_expires_at, Some("2025-04-01T00:00:00Z".parse()?));
    assert_eq!(row.rank_changed_at, Some(at("10:05:00")));

    // Removing another group changes nothing; removing the current one falls back.
    h.publish(
        account,
        Utc::now(),
        vec![logged::<RankChange>(&rank(
            p, "remove", "builder", "", "10:06:00",
        ))],
    )
    .await?;
    h.caught_up().await?;
    assert_eq!(
        expect_player(&h, account, p).await?.rank.as_deref(),
        Some("vip")
    );
    h.publish(
        account,
        Utc::now(),
        vec![logged::<RankChange>(&rank(
            p, "remove", "vip", "", "10:07:00",
        ))],
    )
    .await?;
    h.caught_up().await?;
    let row = expect_player(&h, account, p).await?;
    assert_eq!(row.rank.as_deref(), Some("member"));
    assert_eq!(row.rank_expires_at, None);

    // Older than the last change: ignored. Same time as it, later in the log: applied.
    h.publish(
        account,
        Utc::now(),
        vec![logged::<RankChange>(&rank(
            p, "set", "admin", "", "10:01:00",
        ))],
    )
    .await?;
    let previous = r#","previous_group":"default""#;
    h.publish(
        account,
        Utc::now(),
        vec![logged::<RankChange>(&rank(
            p, "set", "mod", previous, "10:07:00",
        ))],
    )
    .await?;
    h.caught_up().await?;
    let row = expect_player(&h, account, p).await?;
    assert_eq!(row.rank.as_deref(), Some("mod"));
    assert_eq!(row.previous_rank.as_deref(), Some("default"));
    assert_eq!(row.rank_changed_at, Some(at("10:07:00")));
    Ok(())
}

#[tokio::test]
async fn links_and_unlinks_apply_by_time() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let (account, p) = (Uuid::now_v7(), Uuid::now_v7());
    h.publish(
        account,
        Utc::now(),
        vec![logged::<AccountLink>(&link(p, "link", "1", "10:00:00"))],
    )
    .await?;
    h.caught_up().await?;
    let row = expect_player(&h, account, p).await?;
    assert_eq!(row.linked_platform.as_deref(), Some("discord"));
    assert_eq!(row.linked_external_id.as_deref(), Some("1"));
    assert_eq!(row.linked_external_name.as_deref(), Some("name1"));
    assert_eq!(row.linked_at, Some(at("10:00:00")));
    assert_eq!(row.username, None, "links carry no name");

    h.publish(
        account,
        Utc::now(),
        vec![
            logged::<AccountLink>(&link(p, "unlink", "1", "10:10:00")),
            // Older than the unlink: must not come back.
            logged::<AccountLink>(&link(p, "link", "2", "10:05:00")),
        ],
    )
    .await?;
    h.caught_up().await?;
    let row = expect_player(&h, account, p).await?;
    assert_eq!(
        (
            row.linked_platform,
            row.linked_external_id,
            row.linked_external_name
        ),
        (None, None, None)
    );
    assert_eq!(row.linked_at, Some(at("10:10:00")));

    h.publish(
        account,
        Utc::now(),
        vec![logged::<AccountLink>(&link(p, "link", "3", "10:20:00"))],
    )
    .await?;
    h.caught_up().await?;
    let row = expect_player(&h, account, p).await?;
    assert_eq!(row.linked_external_id.as_deref(), Some("3"));
    assert_eq!(row.linked_at, Some(at("10:20:00")));
    Ok(())
}

#[tokio::test]
async fn a_record_logged_twice_rewrites_no_player() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let (account, p, server) = (Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7());
    let chat = logged::<ChatEntry>(&format!(
        r#"{{"server_id":"{server}","player_uuid":"{p}","entry_type":"chat","message":"hi",
            "sent_at":"{}"}}"#,
        at("10:00:00").to_rfc3339()
    ));
    let rank = logged::<RankChange>(&rank(p, "set", "vip", "", "10:00:00"));
    h.publish(account, Utc::now(), vec![chat.clone()]).await?;
    h.publish(account, Utc::now(), vec![rank]).await?;
    h.caught_up().await?;
    let before = table_checksum(h.pool(), "players").await?;
    h.publish(account, Utc::now(), vec![chat]).await?;
    h.caught_up().await?;
    assert_eq!(table_checksum(h.pool(), "players").await?, before);
    Ok(())
}
