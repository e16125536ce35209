//! Chat: one row per entry, stored once, and a large backlog applied in full.

use crate::harness::{Harness, logged, logged_as};
use chrono::{DateTime, Utc};
use shared::envelope::Logged;
use shared::records::ChatEntry;
use uuid::Uuid;

fn entry(server: Uuid, player: Uuid, entry_type: &str, message: &str) -> Logged<ChatEntry> {
    logged(&format!(
        r#"{{"server_id":"{server}","player_uuid":"{player}","entry_type":"{entry_type}",
            "message":"{message}","channel":"global","sent_at":"2025-03-01T11:00:00Z"}}"#
    ))
}

#[tokio::test]
async fn entries_are_stored_once_with_their_fields() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let (account, other, player, server) = (
        Uuid::now_v7(),
        Uuid::now_v7(),
        Uuid::now_v7(),
        Uuid::now_v7(),
    );
    let said = entry(server, player, "chat", r#"hi \"all\" ✓"#);
    let ran: Logged<ChatEntry> = logged(&format!(
        r#"{{"server_id":"{server}","player_uuid":"{player}","entry_type":"command","message":"/spawn"}}"#
    ));
    let received: DateTime<Utc> = "2025-03-01T12:00:00Z".parse()?;
    h.publish(account, received, vec![said.clone(), ran.clone()])
        .await?;
    // A late retry of the same id, and the same id under another account.
    let retry = logged_as::<ChatEntry>(
        said.id,
        &serde_json::to_string(&entry(server, player, "chat", "changed").record)?,
    );
    h.publish(account, received, vec![retry.clone()]).await?;
    h.publish(other, received, vec![retry]).await?;
    h.caught_up().await?;

    type Row = (
        Uuid,
        Uuid,
        Uuid,
        String,
        String,
        Option<String>,
        DateTime<Utc>,
    );
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT id, player_uuid, server_id, entry_type, message, channel, sent_at
         FROM chat_messages WHERE account_id = $1 ORDER BY entry_type",
    )
    .bind(account)
    .fetch_all(h.pool())
    .await?;
    let sent: DateTime<Utc> = "2025-03-01T11:00:00Z".parse()?;
    assert_eq!(
        rows,
        [
            (
                said.id,
                player,
                server,
                "chat".to_owned(),
                r#"hi "all" ✓"#.to_owned(),
                Some("global".to_owned()),
                sent
            ),
            (
                ran.id,
                player,
                server,
                "command".to_owned(),
                "/spawn".to_owned(),
                None,
                received
            ),
        ]
    );
    let others: Vec<String> =
        sqlx::query_scalar("SELECT message FROM chat_messages WHERE account_id = $1")
            .bind(other)
            .fetch_all(h.pool())
            .await?;
    assert_eq!(others, ["changed"]);
    Ok(())
}

#[tokio::test]
async fn a_five_thousand_record_backlog_is_applied_in_full() -> anyhow::Result<()> {
    let mut h = Harness::start().await?;
    h.stop_projector().await?;
    let (account, server) = (Uuid::now_v7(), Uuid::now_v7());
    let players: Vec<Uuid> = (0..10).map(|_| Uuid::now_v7()).collect();
    let mut last = 0;
    // 50 fleet-sized batches of 100, every 10th entry a command.
    for batch in 0..50 {
        let records = (0..100)
            .map(|i| {
                let kind = if i % 10 == 0 { "command" } else { "chat" };
                entry(
                    server,
                    players[i % players.len()],
                    kind,
                    &format!("b{batch} m{i}"),
                )
            })
            .collect();
        last = h.publish(account, Utc::now(), records).await?;
    }
    h.start_projector().await?;
    h.caught_up_to(last).await?;

    let (total, commands, distinct): (i64, i64, i64) = sqlx::query_as(
        "SELECT count(*), count(*) FILTER (WHERE entry_type = 'command'),
                count(DISTINCT message)
         FROM chat_messages WHERE account_id = $1",
    )
    .bind(account)
    .fetch_one(h.pool())
    .await?;
    assert_eq!((total, commands, distinct), (5_000, 500, 5_000));
    let per_player: Vec<i64> = sqlx::query_scalar(
        "SELECT count(*) FROM chat_messages WHERE account_id = $1 GROUP BY player_uuid",
    )
    .bind(account)
    .fetch_all(h.pool())
    .await?;
    assert_eq!(per_player, [500; 10]);
    let chat_checkpoint: i64 = sqlx::query_scalar(
        "SELECT last_sequence FROM projection_checkpoints WHERE projection = 'chat'",
    )
    .fetch_one(h.pool())
    .await?;
    assert_eq!(chat_checkpoint, last as i64);
    Ok(())
}
