//! The Overview's activity read models (`recent_events`, timeline model; `recent_flags`,
//! anti-cheat model): each account's newest joins, quits, punishments, rank changes and flags,
//! at most `RECENT_ACTIVITY_KEPT` of each table, equal to the newest rows of `events` and
//! `anticheat_flags` however the records arrived (out of time order, across many chunks, a
//! message logged twice), one account's never among another's, and the same after a rebuild.

use crate::harness::{Harness, logged};
use chrono::{DateTime, Duration, Utc};
use projector::projections::ReadModel;
use projector::projections::anticheat_flags::AnticheatFlags;
use projector::projections::timeline::Timeline;
use projector::rebuild::{RebuildOptions, rebuild};
use shared::envelope::Logged;
use shared::records::{AnticheatFlag, ChatEntry, Punishment, Session};
use shared::timeline::{ACTIVITY_EVENTS, RECENT_ACTIVITY_KEPT};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

const SERVER: Uuid = Uuid::from_u128(0x5e);

fn start() -> DateTime<Utc> {
    "2025-03-01T12:00:00Z".parse().unwrap_or_default()
}

/// A minute after the start: `minute` spreads records over time, out of log order.
fn minute(minute: i64) -> String {
    (start() + Duration::minutes(minute)).to_rfc3339()
}

fn session(player: Uuid, event: &str, at: i64) -> Logged<Session> {
    logged(&format!(
        r#"{{"server_id":"{SERVER}","player_uuid":"{player}","player_name":"p","event":"{event}",
            "at":"{}"}}"#,
        minute(at)
    ))
}

fn ban(player: Uuid, at: i64) -> Logged<Punishment> {
    logged(&format!(
        r#"{{"server_id":"{SERVER}","player_uuid":"{player}","type":"ban","reason":"xray",
            "staff_name":"Ada","issued_at":"{}"}}"#,
        minute(at)
    ))
}

fn flag(player: Uuid, at: i64) -> Logged<AnticheatFlag> {
    logged(&format!(
        r#"{{"server_id":"{SERVER}","player_uuid":"{player}","check_name":"Reach",
            "violation_level":1,"flagged_at":"{}"}}"#,
        minute(at)
    ))
}

fn chat(player: Uuid, at: i64) -> Logged<ChatEntry> {
    logged(&format!(
        r#"{{"server_id":"{SERVER}","player_uuid":"{player}","entry_type":"chat",
            "message":"hi","sent_at":"{}"}}"#,
        minute(at)
    ))
}

/// The ids of `account`'s rows in `table`, newest first as the Overview reads them.
async fn recent(h: &Harness, table: &str, account: Uuid) -> anyhow::Result<Vec<Uuid>> {
    let order = if table == "recent_flags" {
        "flagged_at DESC, id DESC"
    } else {
        "occurred_at DESC, seq DESC, id DESC"
    };
    Ok(sqlx::query_scalar(&format!(
        "SELECT id FROM {table} WHERE account_id = $1 ORDER BY {order}"
    ))
    .bind(account)
    .fetch_all(h.pool())
    .await?)
}

/// The same, as the newest of the large tables.
async fn newest_stored(h: &Harness, table: &str, account: Uuid) -> anyhow::Result<Vec<Uuid>> {
    let sql = if table == "recent_flags" {
        "SELECT id FROM anticheat_flags WHERE account_id = $1 \
         ORDER BY flagged_at DESC, id DESC LIMIT $2"
    } else {
        "SELECT id FROM events WHERE account_id = $1 AND name = ANY($3) \
         ORDER BY occurred_at DESC, seq DESC, id DESC LIMIT $2"
    };
    Ok(sqlx::query_scalar(sql)
        .bind(account)
        .bind(RECENT_ACTIVITY_KEPT)
        .bind(&ACTIVITY_EVENTS[..])
        .fetch_all(h.pool())
        .await?)
}

#[tokio::test]
async fn the_overview_keeps_the_newest_activity_of_each_account_and_a_rebuild_keeps_the_same()
-> anyhow::Result<()> {
    let h = Harness::start().await?;
    let (account, other) = (Uuid::now_v7(), Uuid::now_v7());
    let player = Uuid::now_v7();
    let kept = RECENT_ACTIVITY_KEPT;
    // Many more joins, quits and flags than are kept, in messages of 7, each message's times
    // spread around (older and newer than what came before); bans and chat between them.
    let total = kept * 2 + 30;
    let times: Vec<i64> = (0..total).map(|i| (i * 37) % total).collect();
    for (n, batch) in times.chunks(7).enumerate() {
        let sessions = batch
            .iter()
            .map(|&t| session(player, if t % 2 == 0 { "join" } else { "quit" }, t))
            .collect();
        h.publish(account, Utc::now(), sessions).await?;
        let flags = batch.iter().map(|&t| flag(player, t)).collect();
        h.publish(account, Utc::now(), flags).await?;
        h.publish(account, Utc::now(), vec![chat(player, total + n as i64)])
            .await?;
    }
    // A ban newer than everything, logged twice (a retry): kept once.
    let newest = ban(player, total * 2);
    h.publish(account, Utc::now(), vec![newest.clone()]).await?;
    h.publish(account, Utc::now(), vec![newest.clone()]).await?;
    // Another account's few.
    h.publish(other, Utc::now(), vec![session(player, "join", 5)])
        .await?;
    h.publish(other, Utc::now(), vec![flag(player, 6)]).await?;
    h.caught_up().await?;

    for table in ["recent_events", "recent_flags"] {
        let shown = recent(&h, table, account).await?;
        assert_eq!(shown.len() as i64, kept, "{table} keeps {kept} rows");
        assert_eq!(
            shown,
            newest_stored(&h, table, account).await?,
            "{table} is the newest of what the account stored"
        );
        assert_eq!(
            recent(&h, table, other).await?.len(),
            1,
            "{table} of the other account"
        );
    }
    let events = recent(&h, "recent_events", account).await?;
    assert_eq!(
        events.first(),
        Some(&newest.id),
        "the retried ban is the newest"
    );
    assert_eq!(events.iter().filter(|id| **id == newest.id).count(), 1);

    // A rebuild of both models keeps exactly the same rows, column for column.
    let checksums = |h: &Harness| {
        let pool = h.pool().clone();
        async move {
            let mut sums = Vec::new();
            for table in ["recent_events", "recent_flags"] {
                let rows: Vec<String> =
                    sqlx::query_scalar(&format!("SELECT t::text FROM {table} t ORDER BY 1"))
                        .fetch_all(&pool)
                        .await?;
                sums.push(rows);
            }
            anyhow::Ok(sums)
        }
    };
    let before = checksums(&h).await?;
    assert_eq!(before[0].len() as i64, kept + 1, "both accounts' events");
    let options = RebuildOptions {
        models: vec![&Timeline as &dyn ReadModel, &AnticheatFlags],
        progress_bar: false,
        progress: None,
    };
    rebuild(&h.config, &options, CancellationToken::new()).await?;
    let after = checksums(&h).await?;
    for (table, (before, after)) in ["recent_events", "recent_flags"]
        .iter()
        .zip(before.iter().zip(&after))
    {
        let gone: Vec<&String> = before.iter().filter(|r| !after.contains(r)).collect();
        let new: Vec<&String> = after.iter().filter(|r| !before.contains(r)).collect();
        assert!(
            gone.is_empty() && new.is_empty(),
            "a rebuild changed {table}: lost {gone:#?}, gained {new:#?}"
        );
    }
    Ok(())
}
