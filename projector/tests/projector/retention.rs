//! Retention per kind: the sweep removes each account's rows past its policy's
//! cutoffs from the read models (by each row's own time), destroys the period keys of the days
//! before them so the log's old personal fields read as erased, leaves other accounts and
//! newer rows alone, changes nothing when run again, and a rebuild brings nothing back.
//!
//! Records are sealed here as ingest seals them (under the period key of the day they were
//! received) and published with old receipt times, so "old" is real for the keys too.

use crate::harness::{Harness, eventually, logged, table_checksum};
use async_nats::jetstream;
use chrono::{DateTime, Duration, Utc};
use projector::rebuild::{RebuildOptions, rebuild};
use projector::retention::{self, SweepReport};
use shared::envelope::{LogMessage, Logged, RecordBatch};
use shared::privacy::{ERASED, Keyring, PrivacyPolicy, RetentionKind, is_sealed};
use shared::records::{AnticheatFlag, ChatEntry, CustomEvent, PluginRecord, Session};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

/// The keyring ingest would use: the same buckets and master key as the projector's.
async fn keyring(h: &Harness) -> anyhow::Result<Keyring> {
    h.config
        .privacy
        .keyring(&h.js, &h.config.common.event_log)
        .await
}

/// Seals `records` as received at `received_at` and appends them; returns the sequence.
async fn publish_sealed<T: PluginRecord>(
    h: &Harness,
    keyring: &Keyring,
    account: Uuid,
    received_at: DateTime<Utc>,
    records: Vec<Logged<T>>,
) -> anyhow::Result<u64> {
    let name = records
        .first()
        .and_then(|r| r.record.subject_name().map(str::to_owned));
    let subject =
        h.config
            .common
            .event_log
            .subjects()
            .for_records(account, T::KIND, name.as_deref());
    let mut message = LogMessage::new(account, received_at, T::into_batch(records));
    let policy = keyring.policy(account).await?;
    keyring.seal(&mut message, &policy).await?;
    h.publish_raw(subject, message.encode()).await
}

fn chat(player: Uuid, message: &str, at: DateTime<Utc>) -> Logged<ChatEntry> {
    logged(&format!(
        r#"{{"server_id":"{}","player_uuid":"{player}","entry_type":"chat","message":"{message}",
            "channel":"global","sent_at":"{}"}}"#,
        Uuid::nil(),
        at.to_rfc3339()
    ))
}

fn session(player: Uuid, event: &str, at: DateTime<Utc>) -> Logged<Session> {
    logged(&format!(
        r#"{{"server_id":"{}","player_uuid":"{player}","player_name":"p","event":"{event}",
            "ip_hash":"hash-{player}","at":"{}"}}"#,
        Uuid::nil(),
        at.to_rfc3339()
    ))
}

fn flag(player: Uuid, at: DateTime<Utc>) -> Logged<AnticheatFlag> {
    logged(&format!(
        r#"{{"server_id":"{}","player_uuid":"{player}","check_name":"Reach","violation_level":1,
            "flagged_at":"{}"}}"#,
        Uuid::nil(),
        at.to_rfc3339()
    ))
}

fn custom(player: Uuid, name: &str, at: DateTime<Utc>) -> Logged<CustomEvent> {
    logged(&format!(
        r#"{{"player_uuid":"{player}","name":"{name}","properties":{{"email":"a@b.c"}},
            "occurred_at":"{}"}}"#,
        at.to_rfc3339()
    ))
}

/// Ids of `account`'s rows of `table`.
async fn ids(h: &Harness, table: &str, account: Uuid) -> anyhow::Result<Vec<Uuid>> {
    let mut ids: Vec<Uuid> =
        sqlx::query_scalar(&format!("SELECT id FROM {table} WHERE account_id = $1"))
            .bind(account)
            .fetch_all(h.pool())
            .await?;
    ids.sort();
    Ok(ids)
}

fn sorted(mut ids: Vec<Uuid>) -> Vec<Uuid> {
    ids.sort();
    ids
}

/// The chat text of every log message, opened as any reader of the log opens it (with a
/// keyring of its own: nothing cached from before keys were destroyed).
async fn chat_in_log(h: &Harness) -> anyhow::Result<Vec<(Uuid, String)>> {
    let mut stream = h.js.get_stream(&h.config.common.event_log.stream).await?;
    let last = stream.info().await?.state.last_sequence;
    let mut messages = Vec::new();
    for sequence in 1..=last {
        let raw = stream.get_raw_message(sequence).await?;
        messages.push(LogMessage::decode(&raw.payload)?);
    }
    keyring(h).await?.open(&mut messages).await?;
    let mut texts = Vec::new();
    for message in messages {
        if let RecordBatch::Chat(entries) = message.batch {
            for entry in entries {
                texts.push((entry.id, entry.record.message));
            }
        }
    }
    Ok(texts)
}

#[tokio::test]
async fn retention_removes_old_chat_and_ip_hashes_and_a_rebuild_keeps_them_gone()
-> anyhow::Result<()> {
    let mut h = Harness::start().await?;
    let keys = keyring(&h).await?;
    let (account, other, player) = (Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7());
    let now = Utc::now();
    let (old, recent) = (now - Duration::days(60), now - Duration::hours(2));

    let (old_chat, new_chat, others_chat) = (
        chat(player, "said long ago", old),
        chat(player, "said today", recent),
        chat(player, "kept forever", old),
    );
    let (old_join, new_join, others_join) = (
        session(player, "join", old),
        session(player, "join", recent),
        session(player, "join", old),
    );
    publish_sealed(&h, &keys, account, old, vec![old_chat.clone()]).await?;
    publish_sealed(&h, &keys, account, recent, vec![new_chat.clone()]).await?;
    publish_sealed(&h, &keys, other, old, vec![others_chat.clone()]).await?;
    publish_sealed(&h, &keys, account, old, vec![old_join.clone()]).await?;
    publish_sealed(&h, &keys, account, recent, vec![new_join.clone()]).await?;
    publish_sealed(&h, &keys, other, old, vec![others_join.clone()]).await?;
    h.caught_up().await?;
    // The running projector's sweeper (one sweep at start) must not be the one that finds the
    // policy below, or the sweep this test runs would find nothing left to report.
    h.stop_projector().await?;
    assert_eq!(
        ids(&h, "chat_messages", account).await?,
        sorted(vec![old_chat.id, new_chat.id])
    );

    // Chat for 30 days, IP hashes for 10; the other account keeps everything.
    let mut policy = PrivacyPolicy::default();
    policy.retention.chat = Some(30);
    policy.retention.ip_hashes = Some(10);
    keys.set_policy(account, &policy).await?;
    let report = retention::sweep(h.pool(), &keys, now).await?;
    assert_eq!(report.rows(RetentionKind::Chat), 2, "chat row + its event");
    assert_eq!(report.rows(RetentionKind::IpHashes), 1);
    assert_eq!(report.periods.get(&RetentionKind::Chat), Some(&1));
    assert_eq!(report.periods.get(&RetentionKind::IpHashes), Some(&1));

    assert_eq!(ids(&h, "chat_messages", account).await?, [new_chat.id]);
    assert_eq!(ids(&h, "chat_messages", other).await?, [others_chat.id]);
    let chat_events: Vec<Uuid> =
        sqlx::query_scalar("SELECT id FROM events WHERE account_id = $1 AND name = 'chat_message'")
            .bind(account)
            .fetch_all(h.pool())
            .await?;
    assert_eq!(chat_events, [new_chat.id]);
    let hashes: Vec<(Uuid, Uuid, Option<String>)> = sqlx::query_as(
        "SELECT account_id, id, ip_hash FROM sessions ORDER BY account_id, joined_at",
    )
    .fetch_all(h.pool())
    .await?;
    let hash_of = |account: Uuid, id: Uuid| {
        hashes
            .iter()
            .find(|(a, i, _)| (*a, *i) == (account, id))
            .map(|(_, _, hash)| hash.clone())
    };
    // The old session stays, without its hash; the newer one and the other account's keep it.
    assert_eq!(hash_of(account, old_join.id), Some(None));
    assert!(hash_of(account, new_join.id).flatten().is_some());
    assert!(hash_of(other, others_join.id).flatten().is_some());

    // The log's old chat text can no longer be opened; the newer and the other account's can.
    let texts = chat_in_log(&h).await?;
    let text_of = |id: Uuid| texts.iter().find(|(i, _)| *i == id).map(|(_, t)| t.clone());
    assert_eq!(text_of(old_chat.id).as_deref(), Some(ERASED));
    assert_eq!(text_of(new_chat.id).as_deref(), Some("said today"));
    assert_eq!(text_of(others_chat.id).as_deref(), Some("kept forever"));

    // Idempotent: a second sweep removes nothing and rewrites nothing.
    let before = (
        table_checksum(h.pool(), "chat_messages").await?,
        table_checksum(h.pool(), "events").await?,
        table_checksum(h.pool(), "sessions").await?,
    );
    let again = retention::sweep(h.pool(), &keys, now).await?;
    assert!(again.is_empty(), "{again:?}");
    let after = (
        table_checksum(h.pool(), "chat_messages").await?,
        table_checksum(h.pool(), "events").await?,
        table_checksum(h.pool(), "sessions").await?,
    );
    assert_eq!(before, after);

    // A rebuild replays the whole log: the old chat comes back neither as a row nor as text.
    rebuild(
        &h.config,
        &RebuildOptions::default(),
        CancellationToken::new(),
    )
    .await?;
    assert_eq!(ids(&h, "chat_messages", account).await?, [new_chat.id]);
    assert_eq!(ids(&h, "chat_messages", other).await?, [others_chat.id]);
    let leaked: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM events WHERE properties::text LIKE '%said long ago%'
         OR (account_id = $1 AND id = $2)",
    )
    .bind(account)
    .bind(old_chat.id)
    .fetch_one(h.pool())
    .await?;
    assert_eq!(leaked, 0);
    let rebuilt_hash: Option<String> =
        sqlx::query_scalar("SELECT ip_hash FROM sessions WHERE account_id = $1 AND id = $2")
            .bind(account)
            .bind(old_join.id)
            .fetch_one(h.pool())
            .await?;
    assert_eq!(rebuilt_hash, None);
    let stored: Vec<String> = sqlx::query_scalar("SELECT message FROM chat_messages")
        .fetch_all(h.pool())
        .await?;
    assert!(
        stored
            .iter()
            .all(|m| !is_sealed(m) && !m.contains("long ago")),
        "{stored:?}"
    );
    Ok(())
}

#[tokio::test]
async fn retention_removes_sessions_custom_events_and_flags_by_their_own_time() -> anyhow::Result<()>
{
    let mut h = Harness::start().await?;
    let keys = keyring(&h).await?;
    let (account, player, online) = (Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7());
    let now = Utc::now();
    let (old, recent) = (now - Duration::days(400), now - Duration::days(1));

    let (old_join, old_quit) = (
        session(player, "join", old),
        session(player, "quit", old + Duration::hours(1)),
    );
    // Joined long ago and never left: still online, so kept.
    let still_on = session(online, "join", old);
    let (old_event, new_event) = (
        custom(player, "shop_buy", old),
        custom(player, "shop_buy", recent),
    );
    let other_name = custom(player, "quest_done", old);
    let (old_flag, new_flag) = (flag(player, old), flag(player, recent));
    publish_sealed(&h, &keys, account, old, vec![old_join.clone()]).await?;
    publish_sealed(&h, &keys, account, old, vec![old_quit.clone()]).await?;
    publish_sealed(&h, &keys, account, old, vec![still_on.clone()]).await?;
    publish_sealed(&h, &keys, account, old, vec![old_event.clone()]).await?;
    publish_sealed(&h, &keys, account, recent, vec![new_event.clone()]).await?;
    publish_sealed(&h, &keys, account, old, vec![other_name.clone()]).await?;
    publish_sealed(&h, &keys, account, old, vec![old_flag.clone()]).await?;
    publish_sealed(&h, &keys, account, recent, vec![new_flag.clone()]).await?;
    h.caught_up().await?;
    // As above: the running projector's sweeper must not be the one that finds the policy.
    h.stop_projector().await?;
    let rollups = table_checksum(h.pool(), "event_hours").await?;

    let mut policy = PrivacyPolicy::default();
    policy.retention.sessions = Some(30);
    policy.retention.custom_events = Some(30);
    policy.retention.anticheat_flags = Some(30);
    keys.set_policy(account, &policy).await?;
    let report: SweepReport = retention::sweep(h.pool(), &keys, now).await?;
    // The closed session, its join and quit events, and the old join event of the session
    // still open (the timeline's history; the open session itself stays), and the Overview's
    // copies of those three events; the old flag and its copy.
    assert_eq!(report.rows(RetentionKind::Sessions), 4 + 3);
    assert_eq!(report.rows(RetentionKind::CustomEvents), 2);
    assert_eq!(report.rows(RetentionKind::AnticheatFlags), 1 + 1);

    assert_eq!(ids(&h, "sessions", account).await?, [still_on.id]);
    assert_eq!(ids(&h, "anticheat_flags", account).await?, [new_flag.id]);
    assert!(ids(&h, "recent_events", account).await?.is_empty());
    assert_eq!(ids(&h, "recent_flags", account).await?, [new_flag.id]);
    let events: Vec<(String, Uuid)> = sqlx::query_as(
        "SELECT name, id FROM events WHERE account_id = $1 ORDER BY name, occurred_at",
    )
    .bind(account)
    .fetch_all(h.pool())
    .await?;
    assert_eq!(events, [("shop_buy".to_owned(), new_event.id)]);
    // Aggregates stay.
    assert_eq!(table_checksum(h.pool(), "event_hours").await?, rollups);
    Ok(())
}

#[tokio::test]
async fn retention_sweeps_in_the_running_projector() -> anyhow::Result<()> {
    let h = Harness::start_with(|config| {
        config.retention_sweep_every = std::time::Duration::from_millis(200);
    })
    .await?;
    let keys = keyring(&h).await?;
    let (account, player) = (Uuid::now_v7(), Uuid::now_v7());
    let old = Utc::now() - Duration::days(10);
    let said = chat(player, "old news", old);
    publish_sealed(&h, &keys, account, old, vec![said.clone()]).await?;
    h.caught_up().await?;
    assert_eq!(ids(&h, "chat_messages", account).await?, [said.id]);

    let mut policy = PrivacyPolicy::default();
    policy.retention.chat = Some(7);
    keys.set_policy(account, &policy).await?;
    // The sweeper removes the rows first and destroys the keys after: wait for both.
    let erased = [(said.id, ERASED.to_owned())];
    eventually(
        "the projector's sweeper to remove old chat and its keys",
        || async {
            let rows_gone = ids(&h, "chat_messages", account).await?.is_empty();
            Ok((rows_gone && chat_in_log(&h).await? == erased).then_some(()))
        },
    )
    .await?;
    Ok(())
}

/// Sanity of the helpers: the raw log holds sealed chat, never the clear text.
#[tokio::test]
async fn retention_test_records_are_sealed_in_the_log() -> anyhow::Result<()> {
    let h = Harness::start().await?;
    let keys = keyring(&h).await?;
    let said = chat(Uuid::now_v7(), "private words", Utc::now());
    publish_sealed(&h, &keys, Uuid::now_v7(), Utc::now(), vec![said]).await?;
    let stream: jetstream::stream::Stream =
        h.js.get_stream(&h.config.common.event_log.stream).await?;
    let raw = stream.get_raw_message(1).await?;
    let text = String::from_utf8_lossy(&raw.payload);
    assert!(!text.contains("private words"), "{text}");
    Ok(())
}
