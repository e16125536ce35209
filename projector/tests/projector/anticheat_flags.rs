//! Anti-cheat flags: one row per flag, stored once, per account.

use crate::harness::{Harness, logged, logged_as};
use chrono::{DateTime, Utc};
use shared::records::AnticheatFlag;
use uuid::Uuid;

#[tokio::test]
async fn flags_are_stored_once_with_their_fields_and_defaults() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let (account, other, player, server) = (
        Uuid::now_v7(),
        Uuid::now_v7(),
        Uuid::now_v7(),
        Uuid::now_v7(),
    );
    let full = logged::<AnticheatFlag>(&format!(
        r#"{{"server_id":"{server}","player_uuid":"{player}","check_name":"Reach","check_type":"A",
            "violation_level":3.5,"detail":"3.4 blocks","source_plugin":"grim",
            "is_experimental":true,"ping_ms":42.5,"tps":19.8,"flagged_at":"2025-03-01T11:00:00Z"}}"#
    ));
    let bare_json = format!(
        r#"{{"server_id":"{server}","player_uuid":"{player}","check_name":"Fly","violation_level":0}}"#
    );
    let bare = logged::<AnticheatFlag>(&bare_json);
    let received: DateTime<Utc> = "2025-03-01T12:00:00Z".parse()?;
    h.publish(account, received, vec![full.clone(), bare.clone()])
        .await?;
    // A retry of an id, in this account and (as a new flag) in another.
    let retry = logged_as::<AnticheatFlag>(full.id, &bare_json);
    h.publish(account, received, vec![retry.clone()]).await?;
    h.publish(other, received, vec![retry]).await?;
    h.caught_up().await?;

    type Row = (
        Uuid,
        Uuid,
        Uuid,
        String,
        Option<String>,
        f64,
        Option<String>,
        Option<String>,
        bool,
        Option<f64>,
        Option<f64>,
        DateTime<Utc>,
    );
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT id, player_uuid, server_id, check_name, check_type, violation_level, detail,
                source_plugin, is_experimental, ping_ms, tps, flagged_at
         FROM anticheat_flags WHERE account_id = $1 ORDER BY check_name DESC",
    )
    .bind(account)
    .fetch_all(h.pool())
    .await?;
    assert_eq!(
        rows,
        [
            (
                full.id,
                player,
                server,
                "Reach".to_owned(),
                Some("A".to_owned()),
                3.5,
                Some("3.4 blocks".to_owned()),
                Some("grim".to_owned()),
                true,
                Some(42.5),
                Some(19.8),
                "2025-03-01T11:00:00Z".parse()?,
            ),
            (
                bare.id,
                player,
                server,
                "Fly".to_owned(),
                None,
                0.0,
                None,
                None,
                false,
                None,
                None,
                received,
            ),
        ]
    );
    let others: Vec<String> =
        sqlx::query_scalar("SELECT check_name FROM anticheat_flags WHERE account_id = $1")
            .bind(other)
            .fetch_all(h.pool())
            .await?;
    assert_eq!(others, ["Fly"]);
    Ok(())
}
