//! Ingest on a 3-node JetStream cluster (stream and buckets with 3 replicas): a member is
//! killed with SIGKILL during steady ingest. Writes go on (503 with Retry-After while the
//! stream elects a new leader, then 202 again), and every acknowledged record is in the stream.
//! Retries resend the same client ids, so a read model (one row per account and id) keeps each
//! record once; in the stream itself only a retried batch may appear twice (its first attempt
//! stored but unacknowledged, the retry merged with other writes under another message id).

use crate::helpers::{PLAYER, SERVER, config};
use async_nats::jetstream::{self, consumer};
use futures::StreamExt;
use ingest::App;
use serde_json::{Value, json};
use shared::envelope::LogMessage;
use shared::event_log::EventLogConfig;
use shared::keys::{KeyEntry, KeyKind, generate_secret, hash_secret};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use test_support::{NatsCluster, private_event_log};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

const WRITERS: usize = 4;
const RECORDS_PER_BATCH: usize = 5;
/// The whole test, start to finish, stays under this.
const TEST_DEADLINE: Duration = Duration::from_secs(60);

/// What the writers saw: ids acknowledged by a 2xx (and how often), and the answers.
#[derive(Default)]
struct Ledger {
    acked: HashMap<Uuid, u32>,
    /// Ids of batches sent more than once (an answer other than 2xx, or a broken connection).
    retried: HashSet<Uuid>,
    duplicates_reported: u64,
    unavailable: u64,
}

/// Which member to kill.
#[derive(Clone, Copy)]
enum Victim {
    /// A member that does not lead the event stream.
    Follower,
    /// The event stream's leader.
    StreamLeader,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn killing_a_follower_loses_and_duplicates_nothing() {
    survives_a_killed_member(Victim::Follower).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn killing_the_stream_leader_loses_and_duplicates_nothing() {
    survives_a_killed_member(Victim::StreamLeader).await;
}

async fn survives_a_killed_member(victim: Victim) {
    shared::telemetry::init_test_tracing();
    let started = Instant::now();
    let mut cluster = NatsCluster::start(3).await.expect("cluster starts");
    let log = EventLogConfig {
        replicas: 3,
        ..private_event_log()
    };
    let admin_key = generate_secret(KeyKind::Admin);
    // NATS_URL as an operator writes it for a cluster: every member, comma-separated.
    let config = config(cluster.url_list(), log.clone(), &admin_key);
    let shutdown = CancellationToken::new();
    let app = App::build(config, shutdown.clone())
        .await
        .expect("ingest builds on the cluster");
    let base = format!("http://{}", app.local_addr());
    tokio::spawn(app.run_until_stopped(shutdown.clone()));
    let _stop_ingest = shutdown.clone().drop_guard();

    let js = jetstream::new(async_nats::connect(cluster.urls()).await.expect("connect"));
    let plugin_key = add_plugin_key(&js, &log).await;
    let http = reqwest::Client::new();
    wait_until_accepted(&http, &base, &plugin_key).await;

    let ledger = Arc::new(Mutex::new(Ledger::default()));
    let stop = CancellationToken::new();
    let writers: Vec<_> = (0..WRITERS)
        .map(|_| {
            let (http, base, key) = (http.clone(), base.clone(), plugin_key.clone());
            tokio::spawn(write_until(http, base, key, ledger.clone(), stop.clone()))
        })
        .collect();

    // Steady ingest first, then the crash, then more acknowledged writes after it.
    wait_for_acked(&ledger, 100, started).await;
    let leader = stream_leader(&js, &log.stream).await;
    let index = match victim {
        Victim::StreamLeader => leader
            .as_deref()
            .and_then(|name| cluster.index_of(name))
            .expect("the stream has a leader in the cluster"),
        Victim::Follower => (0..3)
            .find(|&i| Some(cluster.name(i)) != leader.as_deref())
            .expect("a follower"),
    };
    let acked_before = ledger.lock().expect("lock").acked.len();
    cluster.kill(index);
    wait_for_acked(&ledger, acked_before + 200, started).await;
    stop.cancel();
    for writer in writers {
        writer.await.expect("writer finishes");
    }

    let ledger = Arc::try_unwrap(ledger)
        .ok()
        .expect("writers are done")
        .into_inner()
        .expect("lock");
    let stored = ids_in_stream(&js, &log.stream).await;
    let twice: Vec<_> = stored
        .iter()
        .filter(|(id, n)| **n > 1 && !ledger.retried.contains(id))
        .collect();
    assert!(
        twice.is_empty(),
        "ids of batches sent once stored more than once: {twice:?}"
    );
    let missing: Vec<_> = ledger
        .acked
        .keys()
        .filter(|id| !stored.contains_key(id))
        .collect();
    assert!(
        missing.is_empty(),
        "{} acknowledged ids are not in the stream",
        missing.len()
    );
    let acked_twice = ledger.acked.values().filter(|n| **n > 1).count();
    assert_eq!(acked_twice, 0, "no id is acknowledged by two 2xx answers");
    assert!(
        started.elapsed() < TEST_DEADLINE,
        "took {:?}",
        started.elapsed()
    );
    tracing::info!(
        acked = ledger.acked.len(),
        stored = stored.len(),
        duplicates_reported = ledger.duplicates_reported,
        unavailable = ledger.unavailable,
        "cluster test done"
    );
}

/// Posts batches of chat records with client ids until `stop`; a batch is retried with the same
/// body (so the same ids) until a 2xx, honouring Retry-After.
async fn write_until(
    http: reqwest::Client,
    base: String,
    key: String,
    ledger: Arc<Mutex<Ledger>>,
    stop: CancellationToken,
) {
    let url = format!("{base}/api/plugin/chat");
    while !stop.is_cancelled() {
        let ids: Vec<Uuid> = (0..RECORDS_PER_BATCH).map(|_| Uuid::now_v7()).collect();
        let body: Vec<Value> = ids
            .iter()
            .map(|id| {
                json!({"id": id, "server_id": SERVER, "player_uuid": PLAYER,
                             "entry_type": "chat", "message": "steady"})
            })
            .collect();
        let body = serde_json::to_vec(&body).expect("json");
        let deadline = Instant::now() + TEST_DEADLINE;
        loop {
            assert!(Instant::now() < deadline, "a batch was never acknowledged");
            let sent = http
                .post(&url)
                .bearer_auth(&key)
                .header("content-type", "application/json")
                .body(body.clone())
                .timeout(Duration::from_secs(10))
                .send()
                .await;
            let wait = match sent {
                Ok(response) if response.status().is_success() => {
                    let report: Value = response.json().await.unwrap_or(Value::Null);
                    let mut ledger = ledger.lock().expect("lock");
                    for id in &ids {
                        *ledger.acked.entry(*id).or_default() += 1;
                    }
                    ledger.duplicates_reported += report["duplicates"].as_u64().unwrap_or(0);
                    break;
                }
                Ok(response) => {
                    let status = response.status().as_u16();
                    assert!(
                        status == 503 || status == 429,
                        "unexpected {status}: {}",
                        response.text().await.unwrap_or_default()
                    );
                    let mut ledger = ledger.lock().expect("lock");
                    ledger.unavailable += 1;
                    ledger.retried.extend(&ids);
                    retry_after(response.headers())
                }
                // The connection broke mid-request: the write may or may not be stored.
                Err(_) => {
                    ledger.lock().expect("lock").retried.extend(&ids);
                    Duration::from_millis(100)
                }
            };
            tokio::time::sleep(wait).await;
        }
    }
}

fn retry_after(headers: &reqwest::header::HeaderMap) -> Duration {
    let seconds = headers
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(1);
    Duration::from_secs(seconds.max(1))
}

async fn wait_for_acked(ledger: &Mutex<Ledger>, at_least: usize, started: Instant) {
    while ledger.lock().expect("lock").acked.len() < at_least {
        assert!(
            started.elapsed() < TEST_DEADLINE,
            "only {} of {at_least} records acknowledged in time",
            ledger.lock().expect("lock").acked.len()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn add_plugin_key(js: &jetstream::Context, log: &EventLogConfig) -> String {
    let secret = generate_secret(KeyKind::Plugin);
    let entry = KeyEntry {
        key_id: Uuid::now_v7(),
        account_id: Uuid::now_v7(),
        kind: KeyKind::Plugin,
        expires_at: None,
    };
    let bucket = js.get_key_value(&log.key_bucket).await.expect("key bucket");
    let value = serde_json::to_vec(&entry).expect("json");
    bucket
        .put(hash_secret(&secret), value.into())
        .await
        .expect("put key");
    secret
}

async fn wait_until_accepted(http: &reqwest::Client, base: &str, key: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let status = http
            .post(format!("{base}/api/plugin/heartbeat"))
            .bearer_auth(key)
            .header("content-type", "application/json")
            .body("{}")
            .send()
            .await
            .map(|r| r.status().as_u16())
            .unwrap_or(0);
        if status == 422 {
            return;
        }
        assert!(Instant::now() < deadline, "key never accepted ({status})");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn stream_leader(js: &jetstream::Context, stream: &str) -> Option<String> {
    let mut stream = js.get_stream(stream).await.expect("stream");
    let info = stream.info().await.expect("stream info");
    info.cluster.clone().and_then(|cluster| cluster.leader)
}

/// Reads the whole stream with an ordered consumer and counts each record id.
async fn ids_in_stream(js: &jetstream::Context, name: &str) -> HashMap<Uuid, u32> {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut stream = loop {
        // Right after the crash the stream may still be electing; retry its info briefly.
        match js.get_stream(name).await {
            Ok(stream) => break stream,
            Err(error) => assert!(Instant::now() < deadline, "stream unavailable: {error}"),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let last = stream.info().await.expect("info").state.last_sequence;
    // Creating a consumer goes through the meta leader, which may itself be re-electing.
    let mut messages = loop {
        let created = stream
            .create_consumer(consumer::pull::OrderedConfig::default())
            .await;
        match created {
            Ok(ordered) => break ordered.messages().await.expect("messages"),
            Err(error) => assert!(Instant::now() < deadline, "no ordered consumer: {error}"),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let mut counts: HashMap<Uuid, u32> = HashMap::new();
    let mut seen = 0;
    while seen < last {
        let next = tokio::time::timeout(Duration::from_secs(10), messages.next())
            .await
            .expect("the stream is read within 10 s per message")
            .expect("more messages")
            .expect("a message");
        seen = next.info().expect("info").stream_sequence;
        let message = LogMessage::decode(&next.payload).expect("decodes");
        for envelope in message.envelopes() {
            *counts.entry(envelope.id).or_default() += 1;
        }
    }
    counts
}
