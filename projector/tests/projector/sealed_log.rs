//! A sealed log: the projector opens personal fields before folding them, stores
//! what a destroyed key erased by the read models' rules (never parking it), and waits out a
//! key bucket it cannot read instead of taking its fields for erased.

use crate::harness::{Harness, eventually, logged};
use crate::parking::parked;
use chrono::Utc;
use projector::Projector;
use serde_json::json;
use shared::envelope::{LogMessage, RecordBatch};
use shared::privacy::{PrivacyBuckets, PrivacyPolicy};
use sqlx::PgPool;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

/// A player's (uuid, username, names, linked external id).
type PlayerNames = (Uuid, Option<String>, Vec<String>, Option<String>);

fn chat(player: Uuid, name: &str, text: &str) -> String {
    json!({"server_id": Uuid::from_u128(1), "player_uuid": player, "player_name": name,
           "entry_type": "chat", "message": text})
    .to_string()
}

/// `batch` sealed as ingest seals it: the subject and bytes to append.
pub(crate) async fn sealed(
    h: &Harness,
    keyring: &shared::privacy::Keyring,
    account: Uuid,
    batch: RecordBatch,
) -> anyhow::Result<(String, Vec<u8>)> {
    let kind = batch.kind();
    let mut message = LogMessage::new(account, Utc::now(), batch);
    keyring
        .seal(&mut message, &PrivacyPolicy::default())
        .await?;
    let subject = h
        .config
        .common
        .event_log
        .subjects()
        .for_records(account, kind, None);
    Ok((subject, message.encode()))
}

/// Seals `batch` as ingest would and appends it; returns its stream sequence.
async fn append_sealed(
    h: &Harness,
    keyring: &shared::privacy::Keyring,
    account: Uuid,
    batch: RecordBatch,
) -> anyhow::Result<u64> {
    let (subject, bytes) = sealed(h, keyring, account, batch).await?;
    h.publish_raw(subject, bytes).await
}

async fn chat_lines(pool: &PgPool, account: Uuid) -> anyhow::Result<Vec<(Uuid, String)>> {
    Ok(sqlx::query_as(
        "SELECT player_uuid, message FROM chat_messages WHERE account_id = $1 ORDER BY message",
    )
    .bind(account)
    .fetch_all(pool)
    .await?)
}

#[tokio::test]
async fn sealed_fields_are_stored_clear_and_an_erased_players_by_the_erasure_rules()
-> anyhow::Result<()> {
    let h = Harness::start().await?;
    let keyring = h.keyring().await?;
    let (account, erased, kept) = (Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7());
    let server = Uuid::from_u128(1);
    let batches = [
        RecordBatch::Chat(vec![
            logged(&chat(erased, "Pat", "my phone is 555-0100")),
            logged(&chat(kept, "Quinn", "hi all")),
        ]),
        RecordBatch::Session(vec![logged(
            &json!({"server_id": server, "player_uuid": erased, "player_name": "Pat",
                    "event": "join", "ip_hash": "0badc0ffee"})
            .to_string(),
        )]),
        RecordBatch::AccountLink(vec![logged(
            &json!({"player_uuid": erased, "platform": "discord", "external_id": "4242",
                    "external_name": "pat#1", "action": "link"})
            .to_string(),
        )]),
    ];
    let mut log = Vec::new();
    for batch in batches {
        log.push(sealed(&h, &keyring, account, batch).await?);
    }
    // Destroyed before anything of Pat reaches the log (so before the projector could read
    // the key): every field of Pat reads as erased, as in a rebuild after an erasure.
    keyring.destroy_player(account, erased).await?;
    for (subject, bytes) in log {
        h.publish_raw(subject, bytes).await?;
    }
    let last = h.caught_up().await?;

    assert_eq!(
        chat_lines(h.pool(), account).await?,
        [(kept, "hi all".to_owned())],
        "the erased line is not stored; the other player's is, in clear"
    );
    let players: Vec<PlayerNames> = sqlx::query_as(
        "SELECT uuid, username, names, linked_external_id FROM players
         WHERE account_id = $1 ORDER BY username NULLS FIRST",
    )
    .bind(account)
    .fetch_all(h.pool())
    .await?;
    assert_eq!(
        players,
        [
            (erased, None, vec![], None),
            (kept, Some("Quinn".into()), vec!["Quinn".into()], None)
        ]
    );
    let session: (Option<String>,) =
        sqlx::query_as("SELECT ip_hash FROM sessions WHERE account_id = $1")
            .bind(account)
            .fetch_one(h.pool())
            .await?;
    assert_eq!(session, (None,), "the session stays, without its IP hash");
    let names: i64 = sqlx::query_scalar("SELECT count(*) FROM player_names WHERE player_uuid = $1")
        .bind(erased)
        .fetch_one(h.pool())
        .await?;
    assert_eq!(names, 0);
    // The timeline keeps the chat event with what the record holds: no text, no name.
    let said: Vec<String> = sqlx::query_scalar(
        "SELECT properties::text FROM events WHERE account_id = $1 AND player_uuid = $2
           AND name = 'chat_message'",
    )
    .bind(account)
    .bind(erased)
    .fetch_all(h.pool())
    .await?;
    assert_eq!(said.len(), 1);
    assert!(
        !said[0].contains("555-0100") && !said[0].contains("Pat"),
        "{said:?}"
    );
    assert_eq!(parked(h.pool()).await?, [], "nothing erased is parked");
    assert_eq!(crate::harness::checkpoint(h.pool()).await?, last as i64);
    Ok(())
}

#[tokio::test]
async fn an_unreadable_key_bucket_is_waited_out_not_taken_for_erasure() -> anyhow::Result<()> {
    let mut h = Harness::start().await?;
    let keyring = h.keyring().await?;
    let (account, player, other) = (Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7());
    let first = append_sealed(
        &h,
        &keyring,
        account,
        RecordBatch::Chat(vec![logged(&chat(player, "Pat", "before"))]),
    )
    .await?;
    h.caught_up_to(first).await?;

    // A message of a player whose key the projector never read; the players' bucket goes
    // away (its stream unreachable) after the projector opened it and before it reads on.
    h.stop_projector().await?;
    let second = append_sealed(
        &h,
        &keyring,
        account,
        RecordBatch::Chat(vec![logged(&chat(other, "Quinn", "during the outage"))]),
    )
    .await?;
    let buckets = PrivacyBuckets::of(&h.config.common.event_log);
    let key_name = format!("p.{account}.{other}");
    let wrapped =
        h.js.get_key_value(&buckets.players.bucket)
            .await?
            .get(&key_name)
            .await?
            .expect("sealing stored the player's key");
    let projector = Projector::build(&h.config).await?;
    h.js.delete_key_value(&buckets.players.bucket).await?;
    let retries_before = retries();
    let shutdown = CancellationToken::new();
    let running = tokio::spawn(projector.run(shutdown.clone()));
    eventually("the projector to retry the chunk", || async {
        Ok((retries() > retries_before).then_some(()))
    })
    .await?;
    assert!(crate::harness::checkpoint(h.pool()).await? < second as i64);
    assert_eq!(parked(h.pool()).await?, []);

    // The bucket is back with the same key: the message is applied, in clear.
    let store = h.js.create_key_value(buckets.players.clone()).await?;
    store.put(&key_name, wrapped).await?;
    h.caught_up_to(second).await?;
    let lines: Vec<String> = chat_lines(h.pool(), account)
        .await?
        .into_iter()
        .map(|(_, text)| text)
        .collect();
    assert_eq!(lines, ["before", "during the outage"]);
    assert_eq!(parked(h.pool()).await?, []);
    shutdown.cancel();
    running.await??;
    Ok(())
}

fn retries() -> u64 {
    shared::telemetry::prometheus()
        .render()
        .lines()
        .find_map(|line| line.strip_prefix("projector_retries_total "))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or(0)
}
