//! The trends rollups (migration 0018) count exactly the `events` rows each insert stored:
//! a record logged twice, in one message or two, counts once, and replaying the whole log
//! changes nothing.

use crate::harness::{Harness, checkpoint, logged, logged_as};
use chrono::Utc;
use shared::records::{CustomEvent, Session};
use uuid::Uuid;

type Hours = Vec<(String, String, Uuid, i64)>;
type Days = Vec<(String, String, Uuid)>;
type DayPlayers = Vec<(String, String, i64)>;

async fn rollups(h: &Harness, account: Uuid) -> anyhow::Result<(Hours, Days, DayPlayers)> {
    let hours = sqlx::query_as(
        "SELECT name, to_char(hour AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24'), server_id, events
         FROM event_hours WHERE account_id = $1 ORDER BY 1, 2, 3",
    )
    .bind(account)
    .fetch_all(h.pool())
    .await?;
    let days = sqlx::query_as(
        "SELECT name, day::text, player_uuid FROM event_player_days
         WHERE account_id = $1 ORDER BY 1, 2, 3",
    )
    .bind(account)
    .fetch_all(h.pool())
    .await?;
    let day_players = sqlx::query_as(
        "SELECT name, day::text, players FROM event_day_players
         WHERE account_id = $1 ORDER BY 1, 2",
    )
    .bind(account)
    .fetch_all(h.pool())
    .await?;
    Ok((hours, days, day_players))
}

#[tokio::test]
async fn rollups_count_each_stored_event_once_through_retries_and_replay() -> anyhow::Result<()> {
    let mut h = Harness::start().await?;
    let (account, p1, p2, server) = (
        Uuid::now_v7(),
        Uuid::now_v7(),
        Uuid::now_v7(),
        Uuid::now_v7(),
    );
    let quest = |player: Uuid, at: &str| {
        format!(r#"{{"player_uuid":"{player}","name":"quest","occurred_at":"{at}"}}"#)
    };
    let retried = logged_as::<CustomEvent>(Uuid::now_v7(), &quest(p1, "2026-10-05T10:15:00Z"));
    // One message: the retried event twice, p1 again in the same hour, p2 in the next
    // (10:59:59 and 11:00:00 are two hours).
    h.publish(
        account,
        Utc::now(),
        vec![
            retried.clone(),
            retried.clone(),
            logged::<CustomEvent>(&quest(p1, "2026-10-05T10:59:59Z")),
            logged::<CustomEvent>(&quest(p2, "2026-10-05T11:00:00Z")),
        ],
    )
    .await?;
    // A later message retries the same id again (past JetStream's duplicate window).
    h.publish(account, Utc::now(), vec![retried.clone()])
        .await?;
    let join = logged::<Session>(&format!(
        r#"{{"server_id":"{server}","player_uuid":"{p2}","player_name":"p","event":"join",
            "at":"2026-10-05T23:59:59Z"}}"#
    ));
    h.publish(account, Utc::now(), vec![join]).await?;
    let last = h.caught_up().await?;

    let nil = Uuid::nil();
    let expected_hours: Hours = vec![
        ("quest".into(), "2026-10-05 10".into(), nil, 2),
        ("quest".into(), "2026-10-05 11".into(), nil, 1),
        ("session_join".into(), "2026-10-05 23".into(), server, 1),
    ];
    let mut expected_days: Days = vec![
        ("quest".into(), "2026-10-05".into(), p1),
        ("quest".into(), "2026-10-05".into(), p2),
        ("session_join".into(), "2026-10-05".into(), p2),
    ];
    expected_days.sort();
    let stored = rollups(&h, account).await?;
    let expected_day_players: DayPlayers = vec![
        ("quest".into(), "2026-10-05".into(), 2),
        ("session_join".into(), "2026-10-05".into(), 1),
    ];
    assert_eq!(
        stored,
        (expected_hours, expected_days, expected_day_players)
    );

    // Replaying the whole log adds nothing.
    h.stop_projector().await?;
    sqlx::query("UPDATE projection_checkpoints SET last_sequence = 0")
        .execute(h.pool())
        .await?;
    assert_eq!(checkpoint(h.pool()).await?, 0);
    h.start_projector().await?;
    h.caught_up_to(last).await?;
    assert_eq!(rollups(&h, account).await?, stored);
    Ok(())
}
