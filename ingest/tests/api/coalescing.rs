//! Concurrent writes for one subject share publishes (group commit), and each still answers
//! only once its own records are in the stream.

use crate::helpers::{PLAYER, SERVER, TestIngest};
use async_nats::jetstream;
use serde_json::{Value, json};
use shared::envelope::LogMessage;
use shared::keys::KeyKind;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use uuid::Uuid;

/// Records per request: small, so many requests fit in one merged publish.
const RECORDS: usize = 5;

/// A chat batch of `RECORDS` records with fresh client ids; the message text names the id.
fn chat_batch() -> (Vec<Uuid>, Value) {
    let ids: Vec<Uuid> = (0..RECORDS).map(|_| Uuid::now_v7()).collect();
    let body = ids
        .iter()
        .map(|id| json!({"id": id, "server_id": SERVER, "player_uuid": PLAYER, "entry_type": "chat", "message": format!("m-{id}")}))
        .collect();
    (ids, body)
}

/// `n` plugin keys of the ingest's account, each accepted. Concurrent writes need a key each:
/// the rate limiter serializes one key's requests (compare-and-set on its window), as one
/// game server's would be.
async fn plugin_keys(ingest: &TestIngest, n: usize) -> Vec<String> {
    let keys = futures::future::join_all(
        (0..n).map(|_| ingest.add_key(ingest.account_id, KeyKind::Plugin)),
    )
    .await;
    futures::future::join_all(keys.iter().map(|key| ingest.wait_until_accepts(key))).await;
    keys
}

/// Posts `body` to the chat route with `key`; the status and the JSON answer.
async fn post_chat(ingest: &TestIngest, key: &str, body: &Value) -> (u16, Value) {
    let response = ingest
        .post_raw(
            "/api/plugin/chat",
            key,
            "application/json",
            body.to_string().into_bytes(),
        )
        .await;
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// Reads the stream straight from the server (not through ingest).
struct StreamReader(jetstream::stream::Stream);

impl StreamReader {
    async fn open(ingest: &TestIngest) -> anyhow::Result<StreamReader> {
        let client = async_nats::connect(ingest.nats.url()).await?;
        Ok(StreamReader(
            jetstream::new(client)
                .get_stream(&ingest.log.stream)
                .await?,
        ))
    }

    /// Every log message's record ids, in stream order.
    async fn messages(&mut self) -> anyhow::Result<Vec<Vec<Uuid>>> {
        let last = self.0.info().await?.state.last_sequence;
        let mut out = Vec::new();
        for seq in 1..=last {
            let raw = self.0.get_raw_message(seq).await?;
            let message = LogMessage::decode(&raw.payload)?;
            out.push(message.envelopes().iter().map(|e| e.id).collect());
        }
        Ok(out)
    }
}

/// How often each id occurs in the stream.
fn occurrences(messages: &[Vec<Uuid>]) -> HashMap<Uuid, usize> {
    let mut counts = HashMap::new();
    for id in messages.iter().flatten() {
        *counts.entry(*id).or_insert(0) += 1;
    }
    counts
}

/// Posts `n` chat batches at once; each request that gets its 202 checks at that moment that
/// its records are in the stream. Returns each request's ids and report.
async fn post_concurrently(ingest: &TestIngest, n: usize) -> Vec<(Vec<Uuid>, Value)> {
    let keys = plugin_keys(ingest, n).await;
    let posts = keys.iter().map(|key| async {
        let (ids, body) = chat_batch();
        let (status, report) = post_chat(ingest, key, &body).await;
        assert_eq!(status, 202, "{report}");
        let mut reader = StreamReader::open(ingest).await.expect("stream");
        let stored: HashSet<Uuid> = reader
            .messages()
            .await
            .expect("read")
            .into_iter()
            .flatten()
            .collect();
        assert!(
            ids.iter().all(|id| stored.contains(id)),
            "a 202 before its records were in the stream"
        );
        (ids, report)
    });
    futures::future::join_all(posts).await
}

/// How late JetStream's acks reach ingest: long enough that every concurrent write arrives
/// while the first publish is in flight.
const ACK_DELAY: Duration = Duration::from_millis(100);

#[tokio::test]
async fn concurrent_writes_for_one_subject_share_publishes_and_answer_after_their_own() {
    let ingest = TestIngest::start_with_ack_delay(ACK_DELAY, |_| {}).await;
    let requests = 64;
    let posted = post_concurrently(&ingest, requests).await;
    for (_, report) in &posted {
        assert_eq!(
            *report,
            json!({"accepted": RECORDS, "duplicates": 0, "rejected": []})
        );
    }

    let messages = StreamReader::open(&ingest)
        .await
        .expect("stream")
        .messages()
        .await
        .expect("read");
    let chat = &messages;
    eprintln!("{requests} requests, {} log messages", chat.len());
    assert!(
        chat.len() <= requests / 4,
        "{requests} concurrent requests made {} log messages: too few were merged",
        chat.len()
    );
    let counts = occurrences(chat);
    assert_eq!(counts.len(), requests * RECORDS);
    assert!(counts.values().all(|&n| n == 1), "a record stored twice");
    let metrics = ingest
        .http
        .get(format!("{}/metrics", ingest.base))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    for name in [
        "ingest_log_publishes_total",
        "ingest_coalesced_messages_total",
    ] {
        assert!(metrics.contains(name), "{name} missing from {metrics}");
    }
    // Each request's records stay together and in order inside one message.
    for (ids, _) in &posted {
        let holder = chat.iter().find(|m| m.contains(&ids[0])).expect("stored");
        let at = holder.iter().position(|id| *id == ids[0]).expect("in it");
        assert_eq!(&holder[at..at + RECORDS], &ids[..]);
    }
}

#[tokio::test]
async fn with_coalescing_off_each_request_is_its_own_log_message() {
    let ingest =
        TestIngest::start_with_ack_delay(ACK_DELAY, |config| config.coalesce.enabled = false).await;
    let requests = 32;
    let posted = post_concurrently(&ingest, requests).await;
    let messages = StreamReader::open(&ingest)
        .await
        .expect("stream")
        .messages()
        .await
        .expect("read");
    let chat: HashSet<Vec<Uuid>> = messages.iter().cloned().collect();
    assert_eq!(messages.len(), requests);
    for (ids, _) in posted {
        assert!(
            chat.contains(&ids),
            "a request's records not alone in a message"
        );
    }
}

#[tokio::test]
async fn retried_writes_are_kept_once_per_record_id() {
    let ingest = TestIngest::start_with_ack_delay(ACK_DELAY, |_| {}).await;
    // An exact retry of a write that was published alone keeps its message id: a duplicate.
    let (ids, body) = chat_batch();
    let (status, first) = ingest.post("/api/plugin/chat", body.clone()).await;
    assert_eq!(
        (status, first["accepted"].as_u64()),
        (202, Some(RECORDS as u64))
    );
    let (status, retry) = ingest.post("/api/plugin/chat", body).await;
    assert_eq!(
        (status, retry),
        (
            202,
            json!({"accepted": 0, "duplicates": RECORDS, "rejected": []})
        )
    );

    // Retries that land in merged publishes with other writes may be stored again, under the
    // same record ids: what a read model keeps (one record per account and id) is unchanged.
    let bodies: Vec<(Vec<Uuid>, Value)> = (0..32).map(|_| chat_batch()).collect();
    let keys = plugin_keys(&ingest, bodies.len()).await;
    for _round in 0..2 {
        let posts = bodies.iter().zip(&keys).map(|((_, body), key)| async {
            let (status, report) = post_chat(&ingest, key, body).await;
            assert_eq!(status, 202, "{report}");
            let counted = report["accepted"].as_u64().expect("accepted")
                + report["duplicates"].as_u64().expect("duplicates");
            assert_eq!(counted, RECORDS as u64, "{report}");
        });
        futures::future::join_all(posts).await;
    }

    let log = ingest.decoded_log().await;
    let mut kept: BTreeMap<(Uuid, Uuid), String> = BTreeMap::new();
    let mut stored = 0;
    for (_, message) in &log {
        if let shared::envelope::RecordBatch::Chat(records) = &message.batch {
            for logged in records {
                stored += 1;
                // The fold's rule: the first record with an (account, id) wins.
                kept.entry((message.account_id, logged.id))
                    .or_insert_with(|| logged.record.message.clone());
            }
        }
    }
    let expected: BTreeMap<(Uuid, Uuid), String> = bodies
        .iter()
        .flat_map(|(ids, _)| ids)
        .chain(&ids)
        .map(|id| ((ingest.account_id, *id), format!("m-{id}")))
        .collect();
    eprintln!("{stored} records stored, {} kept", kept.len());
    assert_eq!(kept, expected);
    assert!(
        stored <= 2 * 32 * RECORDS + RECORDS,
        "{stored} records stored: more than one copy per attempt"
    );
}

#[tokio::test]
async fn when_the_broker_dies_under_load_every_write_is_refused_or_stored() {
    let mut ingest = TestIngest::start_configured(|config| {
        config.publish_timeout = Duration::from_secs(1);
    })
    .await;
    let answered = Arc::new(AtomicUsize::new(0));
    let url = format!("{}/api/plugin/chat", ingest.base);
    let keys = plugin_keys(&ingest, 48).await;
    let workers = keys.into_iter().map(|key| {
        let answered = answered.clone();
        let (http, url) = (ingest.http.clone(), url.clone());
        async move {
            let mut outcomes = Vec::new();
            // Until the first refusal: each worker has one write waiting when the broker dies.
            for _ in 0..200 {
                let (ids, body) = chat_batch();
                let started = Instant::now();
                let response = http
                    .post(&url)
                    .bearer_auth(&key)
                    .json(&body)
                    .send()
                    .await
                    .expect("sent");
                let status = response.status().as_u16();
                let report: Value = response.json().await.expect("json");
                answered.fetch_add(1, Ordering::Relaxed);
                outcomes.push((ids, status, report, started.elapsed()));
                if status != 202 {
                    break;
                }
            }
            outcomes
        }
    });
    let load = futures::future::join_all(workers);
    let nats = &mut ingest.nats;
    let kill = async {
        let deadline = Instant::now() + Duration::from_secs(20);
        while answered.load(Ordering::Relaxed) < 100 {
            assert!(Instant::now() < deadline, "the load never got going");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        nats.kill();
    };
    let (outcomes, ()) = tokio::join!(load, kill);
    let outcomes: Vec<_> = outcomes.into_iter().flatten().collect();

    let mut accepted_ids = Vec::new();
    let mut refused = 0;
    for (ids, status, report, took) in outcomes {
        assert!(
            took < Duration::from_secs(4),
            "a write waited {took:?} (publish timeout 1 s)"
        );
        match status {
            202 => {
                assert_eq!(report["accepted"], RECORDS);
                accepted_ids.extend(ids);
            }
            503 => {
                assert_eq!(report["code"], "unavailable");
                refused += 1;
            }
            other => panic!("status {other}: {report}"),
        }
    }
    eprintln!(
        "{} records accepted, {refused} writes refused",
        accepted_ids.len()
    );
    assert!(
        refused >= 48,
        "every worker ends on a refusal ({refused} refused)"
    );

    ingest.nats.restart().await.expect("restart");
    let deadline = Instant::now() + Duration::from_secs(15);
    let messages = loop {
        let read = async { StreamReader::open(&ingest).await?.messages().await };
        match read.await {
            Ok(messages) => break messages,
            Err(error) => {
                assert!(
                    Instant::now() < deadline,
                    "the stream never came back: {error}"
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    };
    let counts = occurrences(&messages);
    let missing = accepted_ids
        .iter()
        .filter(|id| !counts.contains_key(id))
        .count();
    assert_eq!(missing, 0, "records reported accepted are not in the log");
}

#[tokio::test]
async fn a_merged_custom_event_is_answered_with_the_time_of_receipt_its_message_holds() {
    let ingest = TestIngest::start_with_ack_delay(ACK_DELAY, |_| {}).await;
    let keys = plugin_keys(&ingest, 16).await;
    let posts = keys.iter().map(|key| async {
        let body = json!({"id": Uuid::now_v7(), "player_uuid": PLAYER, "name": "quest_done"});
        let response = ingest
            .post_raw(
                "/api/v1/plugin/events",
                key,
                "application/json",
                body.to_string().into_bytes(),
            )
            .await;
        assert_eq!(response.status(), 202);
        let answer: Value = response.json().await.expect("json");
        let id: Uuid = answer["id"].as_str().expect("id").parse().expect("uuid");
        (id, answer["received_at"].as_str().expect("time").to_owned())
    });
    let answers = futures::future::join_all(posts).await;

    let log = ingest.sealed_log().await;
    assert!(
        log.iter().any(|(_, message)| message.batch.len() > 1),
        "no events were merged"
    );
    for (id, answered) in answers {
        let (_, message) = log
            .iter()
            .find(|(_, m)| m.envelopes().iter().any(|e| e.id == id))
            .expect("stored");
        let logged = message
            .received_at
            .to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
        assert_eq!(answered, logged, "event {id}");
    }
}
