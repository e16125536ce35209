//! A log written before partitions: a stream made the old way (one subject,
//! `<prefix>.ev.>`, no partition count) holding messages, opened by this version. The stream
//! gains the partitioned subjects and `warden_partitions` (EVENT_PARTITIONS), keeps every
//! message where it was, new writes go to `<prefix>.part.<k>.<account>...`, and an account's
//! live stream backfills its old and new events as one history, in log order.

use async_nats::jetstream;
use chrono::Utc;
use pipeline_tests::TestStack;
use pipeline_tests::sse::SseStream;
use reqwest::Method;
use serde_json::{Value, json};
use shared::envelope::{ENVELOPE_VERSION, LogMessage, RecordBatch};
use shared::event_log::{EventLogConfig, PARTITIONS_METADATA};
use shared::subjects::partition_of;
use std::time::Duration;
use test_support::{NatsServer, TestDb, private_event_log};
use uuid::Uuid;

const PLAYER: &str = "069a79f4-44e9-4726-a5be-fca90e38aaf5";
/// How long an event may take to arrive (generous: the whole suite runs at once).
const WAIT: Duration = pipeline_tests::WAIT;

/// A log message of one custom event, in clear, as a version before partitions wrote it.
fn legacy_event(account: Uuid, name: &str) -> anyhow::Result<LogMessage> {
    let batch: RecordBatch = serde_json::from_value(json!({
        "kind": "custom",
        "records": [{"id": Uuid::now_v7(), "record": {"player_uuid": PLAYER, "name": name}}]
    }))?;
    Ok(LogMessage {
        v: ENVELOPE_VERSION,
        account_id: account,
        received_at: Utc::now(),
        batch,
    })
}

/// Creates the stream as it was before partitions and appends `events` (account, name) on
/// their legacy subjects; returns the subjects in log order.
async fn legacy_log(
    nats: &NatsServer,
    log: &EventLogConfig,
    events: &[(Uuid, &str)],
) -> anyhow::Result<Vec<String>> {
    let js = jetstream::new(async_nats::connect(nats.url()).await?);
    let mut config = log.stream_config();
    config.subjects = vec![format!("{}.ev.>", log.subject_prefix)];
    config.metadata.clear();
    js.create_stream(config).await?;
    let mut subjects = Vec::new();
    for (account, name) in events {
        let subject = format!("{}.ev.{account}.custom.{name}", log.subject_prefix);
        let message = legacy_event(*account, name)?;
        js.publish(subject.clone(), message.encode().into())
            .await?
            .await?;
        subjects.push(subject);
    }
    Ok(subjects)
}

/// Two accounts in different partitions (of `partitions`).
fn accounts_in_two_partitions(partitions: u16) -> (Uuid, Uuid) {
    let a = Uuid::now_v7();
    loop {
        let b = Uuid::now_v7();
        if partition_of(a, partitions) != partition_of(b, partitions) {
            return (a, b);
        }
    }
}

#[tokio::test]
async fn a_log_from_before_partitions_is_upgraded_and_reads_as_one_history() -> anyhow::Result<()> {
    let nats = NatsServer::start().await?;
    let log = private_event_log();
    let partitions = log.partitions;
    let (account, other) = accounts_in_two_partitions(partitions);
    let legacy = legacy_log(
        &nats,
        &log,
        &[
            (account, "old_first"),
            (other, "old_elsewhere"),
            (account, "old_second"),
        ],
    )
    .await?;

    let stack = TestStack::start_on(nats, TestDb::create().await?, log.clone(), |v| v).await?;

    // Upgraded in place: both subject forms, the partition count, every message kept.
    let js = jetstream::new(async_nats::connect(stack.nats.url()).await?);
    let mut stream = js.get_stream(&log.stream).await?;
    let info = stream.info().await?;
    assert_eq!(
        info.config.subjects,
        [
            format!("{}.ev.>", log.subject_prefix),
            format!("{}.part.>", log.subject_prefix)
        ]
    );
    assert_eq!(
        info.config.metadata.get(PARTITIONS_METADATA),
        Some(&partitions.to_string())
    );
    assert_eq!(info.state.messages, 3);
    for (sequence, subject) in (1..).zip(&legacy) {
        assert_eq!(
            stream.get_raw_message(sequence).await?.subject.as_str(),
            subject
        );
    }

    // The account (made by hand, with the id its old messages carry) writes anew.
    sqlx::query("INSERT INTO accounts (id, name) VALUES ($1, 'Old network')")
        .bind(account)
        .execute(&stack.db.pool)
        .await?;
    let keys = stack.keys_for(account.to_string()).await?;
    for name in ["new_first", "new_second"] {
        let body = json!({"player_uuid": PLAYER, "name": name});
        let (status, answer) = stack
            .call(
                Method::POST,
                "/api/v1/plugin/events",
                &keys.plugin_key,
                Some(body),
            )
            .await;
        assert_eq!(status, 202, "{answer}");
    }
    let partition = partition_of(account, partitions);
    for (sequence, name) in [(4, "new_first"), (5, "new_second")] {
        assert_eq!(
            stream.get_raw_message(sequence).await?.subject.as_str(),
            format!(
                "{}.part.{partition}.{account}.custom.{name}",
                log.subject_prefix
            )
        );
    }

    // Backfilled from the start: the account's old and new events, in log order, and none
    // of the other account's.
    let url = format!("{}/api/v1/events/stream", stack.base);
    let mut feed = SseStream::open(&stack.http, &url, &keys.dashboard_key, Some("0")).await?;
    let mut seen = Vec::new();
    for _ in 0..4 {
        let event = feed.next(WAIT).await?;
        let data: Value = serde_json::from_str(&event.data)?;
        let seq = data["seq"].as_i64().unwrap_or_default();
        seen.push((data["name"].as_str().unwrap_or_default().to_owned(), seq));
    }
    let names: Vec<&str> = seen.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        names,
        ["old_first", "old_second", "new_first", "new_second"]
    );
    assert!(seen.windows(2).all(|w| w[0].1 < w[1].1), "{seen:?}");
    assert!(
        feed.next(Duration::from_millis(500)).await.is_err(),
        "nothing else belongs to the account"
    );

    // The read models hold the same history: the account's partition read its legacy
    // messages (and left the other account's to that one's partition).
    stack.projected().await?;
    let (status, body) = stack
        .call(
            Method::GET,
            "/api/v1/events?limit=10",
            &keys.dashboard_key,
            None,
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let mut listed: Vec<(i64, String)> = body["items"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|e| {
            let name = e["name"].as_str().unwrap_or_default().to_owned();
            (e["seq"].as_i64().unwrap_or_default(), name)
        })
        .collect();
    listed.sort();
    let listed: Vec<&str> = listed.iter().map(|(_, name)| name.as_str()).collect();
    assert_eq!(listed, names);
    Ok(())
}
