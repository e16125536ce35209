//! Messages that can never be applied (unreadable, or refused by PostgreSQL) are parked, and
//! the log keeps moving past them for every account.

use crate::harness::{Harness, custom_event, eventually, logged};
use chrono::Utc;
use shared::envelope::Logged;
use shared::records::{ChatEntry, CustomEvent, RankChange, RecordKind};
use sqlx::PgPool;
use std::time::Duration;
use uuid::Uuid;

#[tokio::test]
async fn garbage_and_unknown_versions_are_parked_and_later_messages_apply() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let (account, player) = (Uuid::now_v7(), Uuid::now_v7());
    let subjects = h.config.common.event_log.subjects();
    let subject = subjects.for_records(account, RecordKind::Custom, Some("x"));

    let before = h
        .publish(
            account,
            Utc::now(),
            vec![logged::<CustomEvent>(&custom_event(player, "before", "{}"))],
        )
        .await?;
    let garbage = h
        .publish_raw(subject.clone(), b"\xff\x00 definitely not json".to_vec())
        .await?;
    let future = h
        .publish_raw(
            subject.clone(),
            br#"{"v":9,"account_id":"x","future":"fields"}"#.to_vec(),
        )
        .await?;
    let after = h
        .publish(
            account,
            Utc::now(),
            vec![logged::<CustomEvent>(&custom_event(player, "after", "{}"))],
        )
        .await?;
    assert!(before < garbage && garbage < future && future < after);
    h.caught_up_to(after).await?;

    let parked: Vec<(i64, String, String, Vec<u8>)> = sqlx::query_as(
        "SELECT stream_sequence, subject, reason, payload FROM parked_messages ORDER BY stream_sequence",
    )
    .fetch_all(h.pool())
    .await?;
    assert_eq!(parked.len(), 2);
    assert_eq!(parked[0].0, garbage as i64);
    assert_eq!(parked[0].1, subject);
    assert!(parked[0].2.starts_with("undecodable"), "{}", parked[0].2);
    assert_eq!(parked[0].3, b"\xff\x00 definitely not json");
    assert_eq!(parked[1].0, future as i64);
    assert!(
        parked[1].2.starts_with("unknown_version"),
        "{}",
        parked[1].2
    );
    // No model can read them: parked once, for every model.
    let models: Vec<String> = parked_for(h.pool())
        .await?
        .into_iter()
        .map(|p| p.1)
        .collect();
    assert_eq!(models, ["*", "*"]);

    let names: Vec<String> =
        sqlx::query_scalar("SELECT name FROM events WHERE account_id = $1 ORDER BY seq")
            .bind(account)
            .fetch_all(h.pool())
            .await?;
    assert_eq!(names, ["before", "after"]);
    // The consumer counts what it parked just after the chunk commits: the checkpoint can be
    // seen before the counter.
    eventually("the parked messages to be counted", || async {
        let metrics = shared::telemetry::prometheus().render();
        Ok(metrics.contains("projector_parked_total").then_some(()))
    })
    .await?;
    Ok(())
}

/// A rank change whose group is too long for the rank index (random text, so compression
/// cannot shrink it below a B-tree entry's ~2.7 kB): PostgreSQL refuses it, and the players
/// model parks it.
pub(crate) fn over_long_rank(player: Uuid) -> Logged<RankChange> {
    let group: String = (0..250)
        .map(|_| Uuid::new_v4().simple().to_string())
        .collect();
    logged::<RankChange>(&format!(
        r#"{{"player_uuid":"{player}","action":"set","group":"{group}",
            "changed_at":"2025-03-01T11:00:00Z"}}"#
    ))
}

/// A chat entry (a row of `chat_messages`, and a sighting for `players`) saying `message`.
pub(crate) fn chat(server: Uuid, player: Uuid, message: &str) -> Logged<ChatEntry> {
    let mut entry: Logged<ChatEntry> = logged(&format!(
        r#"{{"server_id":"{server}","player_uuid":"{player}","entry_type":"chat",
            "message":"placeholder","sent_at":"2025-03-01T11:00:00Z"}}"#
    ));
    // Set after parsing: ingest's validation is bypassed, as for a message logged
    // before it existed.
    entry.record.message = message.to_owned();
    entry
}

/// The parked rows: `(stream_sequence, reason, sqlstate)`, in log order.
pub(crate) async fn parked(pool: &PgPool) -> anyhow::Result<Vec<(i64, String, Option<String>)>> {
    Ok(sqlx::query_as(
        "SELECT stream_sequence, reason, sqlstate FROM parked_messages ORDER BY stream_sequence",
    )
    .fetch_all(pool)
    .await?)
}

/// The parked rows: `(stream_sequence, projection)`, in log order.
pub(crate) async fn parked_for(pool: &PgPool) -> anyhow::Result<Vec<(i64, String)>> {
    Ok(
        sqlx::query_as("SELECT stream_sequence, projection FROM parked_messages ORDER BY 1, 2")
            .fetch_all(pool)
            .await?,
    )
}

async fn chat_lines(pool: &PgPool, account: Uuid) -> anyhow::Result<Vec<String>> {
    Ok(sqlx::query_scalar(
        "SELECT message FROM chat_messages WHERE account_id = $1 ORDER BY message",
    )
    .bind(account)
    .fetch_all(pool)
    .await?)
}

async fn has_player(pool: &PgPool, account: Uuid, player: Uuid) -> anyhow::Result<bool> {
    Ok(sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM players WHERE account_id = $1 AND uuid = $2)",
    )
    .bind(account)
    .bind(player)
    .fetch_one(pool)
    .await?)
}

#[tokio::test]
async fn a_message_postgresql_refuses_is_parked_and_every_account_moves_on() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let (a, b, server) = (Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7());
    let (speaker, poisoner) = (Uuid::now_v7(), Uuid::now_v7());
    let at = Utc::now();

    h.publish(a, at, vec![chat(server, speaker, "a1")]).await?;
    h.publish(b, at, vec![chat(server, speaker, "b1")]).await?;
    // A NUL in chat text (refused by PostgreSQL's text type), beside a line that is fine: the
    // message is parked as a whole for the chat model, and the other models keep it.
    let poisoned = h
        .publish(
            a,
            at,
            vec![
                chat(server, poisoner, "fine"),
                chat(server, poisoner, "a\u{0}b"),
            ],
        )
        .await?;
    h.publish(b, at, vec![chat(server, speaker, "b2")]).await?;
    let last = h.publish(a, at, vec![chat(server, speaker, "a2")]).await?;
    h.caught_up_to(last).await?;

    assert_eq!(chat_lines(h.pool(), a).await?, ["a1", "a2"]);
    assert_eq!(chat_lines(h.pool(), b).await?, ["b1", "b2"]);
    let parked = parked(h.pool()).await?;
    assert_eq!(parked.len(), 1, "{parked:?}");
    assert_eq!(parked[0].0, poisoned as i64);
    assert_eq!(parked[0].2.as_deref(), Some("22021"), "{parked:?}");
    assert!(
        parked[0].1.starts_with("sqlstate_22021: read model chat: "),
        "{}",
        parked[0].1
    );
    assert_eq!(
        parked_for(h.pool()).await?,
        [(poisoned as i64, "chat".to_owned())]
    );
    // Only chat refused it: players, in its own transaction, keeps the sighting.
    assert!(has_player(h.pool(), a, poisoner).await?);
    assert!(has_player(h.pool(), a, speaker).await?);
    // The consumer counts what it parked (and re-reads the parked gauge from PostgreSQL) just
    // after the chunk commits: the checkpoint can be seen before the metrics.
    eventually("the parked message in the metrics", || async {
        let metrics = shared::telemetry::prometheus().render();
        let counted = metrics.contains(r#"projector_parked_total{reason="sqlstate_22021"}"#)
            && metrics.contains(r#"projector_parked_messages{reason="sqlstate_22021"}"#);
        Ok(counted.then_some(()))
    })
    .await?;
    Ok(())
}

#[tokio::test]
async fn a_refused_message_in_the_middle_of_a_large_chunk_is_the_only_one_parked()
-> anyhow::Result<()> {
    // A long batch wait gathers the whole backlog into one chunk of up to 500 messages.
    let mut h = Harness::start_with(|config| config.batch_wait = Duration::from_secs(2)).await?;
    h.stop_projector().await?;
    let (a, b, server, player) = (
        Uuid::now_v7(),
        Uuid::now_v7(),
        Uuid::now_v7(),
        Uuid::now_v7(),
    );
    let mut poisoned = Vec::new();
    let mut last = 0;
    for i in 0..300 {
        let account = if i % 2 == 0 { a } else { b };
        // Two refusals of different kinds: a NUL in text, and a rank too long for its index
        // (random text, so compression cannot shrink it below the btree's ~2.7 kB).
        last = match i {
            150 => {
                let poisoned = vec![chat(server, player, "x\u{0}")];
                h.publish(account, Utc::now(), poisoned).await?
            }
            151 => {
                h.publish(account, Utc::now(), vec![over_long_rank(player)])
                    .await?
            }
            _ => {
                let line = vec![chat(server, player, &format!("m{i:03}"))];
                h.publish(account, Utc::now(), line).await?
            }
        };
        if i == 150 || i == 151 {
            poisoned.push(last as i64);
        }
    }
    h.start_projector().await?;
    h.caught_up_to(last).await?;

    let parked = parked(h.pool()).await?;
    let sequences: Vec<i64> = parked.iter().map(|p| p.0).collect();
    assert_eq!(sequences, poisoned, "{parked:?}");
    assert_eq!(parked[0].2.as_deref(), Some("22021"), "{parked:?}");
    assert_eq!(parked[1].2.as_deref(), Some("54000"), "{parked:?}");
    // Each parked for the one model that refused it.
    let models: Vec<String> = parked_for(h.pool())
        .await?
        .into_iter()
        .map(|p| p.1)
        .collect();
    assert_eq!(models, ["chat", "players"]);
    let applied: i64 = sqlx::query_scalar("SELECT count(*) FROM chat_messages")
        .fetch_one(h.pool())
        .await?;
    assert_eq!(applied, 298);
    assert_eq!(chat_lines(h.pool(), a).await?.len(), 149);
    assert_eq!(chat_lines(h.pool(), b).await?.len(), 149);
    let ranked: i64 = sqlx::query_scalar("SELECT count(*) FROM players WHERE rank IS NOT NULL")
        .fetch_one(h.pool())
        .await?;
    assert_eq!(ranked, 0, "the refused rank change left a rank");
    crate::workload::every_checkpoint_at(h.pool(), last).await?;
    Ok(())
}

#[tokio::test]
async fn a_rebuild_parks_refused_messages_too_and_finishes() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let (account, server, player) = (Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7());
    h.publish(account, Utc::now(), vec![chat(server, player, "one")])
        .await?;
    let poisoned = h
        .publish(account, Utc::now(), vec![chat(server, player, "\u{0}")])
        .await?;
    let last = h
        .publish(account, Utc::now(), vec![chat(server, player, "two")])
        .await?;
    h.caught_up_to(last).await?;

    let options = projector::rebuild::RebuildOptions::default();
    let rebuilt = projector::rebuild::rebuild(
        &h.config,
        &options,
        tokio_util::sync::CancellationToken::new(),
    );
    let report = tokio::time::timeout(crate::harness::DEADLINE, rebuilt).await??;
    assert!(report.last_sequence >= last);
    assert_eq!(chat_lines(h.pool(), account).await?, ["one", "two"]);
    let parked = parked(h.pool()).await?;
    assert_eq!(parked.len(), 1, "{parked:?}");
    assert_eq!(parked[0].0, poisoned as i64);
    Ok(())
}
