//! Group commit for the event log: the log messages of concurrent requests that share a
//! subject go out as one publish.
//!
//! With `sync_interval: always` every JetStream publish is its own fsync (about 4.5k a second
//! here, however pipelined), so fewer, larger messages are how ingest stays durable and fast.
//! Each subject has a lane: the first request to find it idle starts a publisher task that
//! publishes what is waiting at once (no timer, no added delay); while that publish is in
//! flight, newly arriving messages wait and go out together in the next one, up to
//! [`CoalesceConfig::max_records`] records and [`CoalesceConfig::max_bytes`] bytes. Every
//! request still answers only after the publish holding its records is acknowledged, and a
//! failed publish fails every request in it, and those queued behind it (nothing is reported
//! accepted that was not).
//!
//! The publisher task is spawned, not run by the first request itself, so a client that hangs
//! up does not cancel the publish of the others waiting on it.

mod splice;

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};
use shared::envelope::MAX_RECORDS_PER_MESSAGE;
use shared::privacy::day_of;
use shared::publisher::{Appended, Publisher};
use shared::records::RecordKind;
use splice::Encoded;
use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::oneshot;
use uuid::Uuid;

/// How writes for one subject are merged (`INGEST_COALESCE*`).
#[derive(Debug, Clone, Copy)]
pub struct CoalesceConfig {
    /// `INGEST_COALESCE` (`on`/`off`, default on): off publishes each request's message alone.
    pub enabled: bool,
    /// `INGEST_COALESCE_MAX_RECORDS` (default and most 1,000, the records a log message may
    /// hold for their timeline positions): records per merged publish at most.
    pub max_records: usize,
    /// `INGEST_COALESCE_MAX_BYTES` (default 1 MiB, at most the server's `max_payload`):
    /// payload bytes per merged publish at most.
    pub max_bytes: usize,
}

impl Default for CoalesceConfig {
    fn default() -> Self {
        CoalesceConfig {
            enabled: true,
            max_records: MAX_RECORDS_PER_MESSAGE as usize,
            max_bytes: 1024 * 1024,
        }
    }
}

/// One request's sealed, encoded log message for one subject.
#[derive(Debug)]
pub struct Part {
    /// The account whose key wrote it.
    pub account_id: Uuid,
    /// Its record kind.
    pub kind: RecordKind,
    /// Where it is published.
    pub subject: String,
    /// When its request arrived (the envelope's `received_at`).
    pub received_at: DateTime<Utc>,
    /// Records it holds.
    pub records: usize,
    /// Its records' ids, when every one came from the client (so a retry has the same ids).
    pub client_ids: Option<Vec<Uuid>>,
    /// The encoded message.
    pub payload: Vec<u8>,
}

/// Where a part landed, and the time of receipt its log message holds.
#[derive(Debug, Clone, Copy)]
pub struct Published {
    /// The publish's ack.
    pub appended: Appended,
    /// The message's `received_at`: the part's own, or the earliest of those merged with it.
    pub received_at: DateTime<Utc>,
}

/// Appends [`Part`]s to the log, merging those that wait for the same subject.
#[derive(Clone)]
pub struct Coalescer {
    inner: Arc<Inner>,
}

struct Inner {
    publisher: Publisher,
    config: CoalesceConfig,
    /// A lane exists exactly while its publisher task runs.
    lanes: Mutex<HashMap<LaneKey, VecDeque<Waiting>>>,
}

/// Only messages of one account, kind and subject are merged.
#[derive(Clone, PartialEq, Eq, Hash)]
struct LaneKey {
    account_id: Uuid,
    kind: RecordKind,
    subject: String,
}

struct Waiting {
    part: Part,
    /// Where its records start in the payload; `None` publishes it alone.
    records_start: Option<usize>,
    reply: oneshot::Sender<Result<Published, String>>,
}

impl Coalescer {
    /// Appends through `publisher`, merging as `config` says.
    pub fn new(publisher: Publisher, mut config: CoalesceConfig) -> Self {
        config.max_records = config
            .max_records
            .clamp(1, MAX_RECORDS_PER_MESSAGE as usize);
        Coalescer {
            inner: Arc::new(Inner {
                publisher,
                config,
                lanes: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// Appends `part`, alone or with others for its subject, and waits for the ack of the
    /// publish that holds it. Errors are for logs, not clients.
    pub async fn append(&self, part: Part) -> Result<Published, String> {
        if !self.inner.config.enabled {
            count_publish(1);
            let message_id = part
                .client_ids
                .as_ref()
                .map(|ids| message_id(part.account_id, [ids]));
            let received_at = part.received_at;
            return self
                .inner
                .publisher
                .append(part.subject, message_id, part.payload)
                .await
                .map(|appended| Published {
                    appended,
                    received_at,
                });
        }
        let key = LaneKey {
            account_id: part.account_id,
            kind: part.kind,
            subject: part.subject.clone(),
        };
        let (reply, answer) = oneshot::channel();
        let waiting = Waiting {
            records_start: splice::records_start(&part.payload),
            part,
            reply,
        };
        let idle = match self.inner.lanes().entry(key) {
            Entry::Occupied(mut lane) => {
                lane.get_mut().push_back(waiting);
                None
            }
            Entry::Vacant(lane) => {
                let key = lane.key().clone();
                lane.insert(VecDeque::from([waiting]));
                Some(key)
            }
        };
        if let Some(key) = idle {
            tokio::spawn(self.clone().publish_lane(key));
        }
        answer
            .await
            .unwrap_or_else(|_| Err("the publish holding this write was abandoned".into()))
    }

    /// Publishes the lane's waiting messages, a merged batch at a time, until it is empty.
    async fn publish_lane(self, key: LaneKey) {
        // A panic drops the lane (its waiting requests get an error) instead of leaving it
        // registered with no task to publish it.
        let _guard = LaneGuard {
            inner: &self.inner,
            key: &key,
        };
        loop {
            let mut batch = {
                let mut lanes = self.inner.lanes();
                let Some(lane) = lanes.get_mut(&key) else {
                    return;
                };
                let batch = take_batch(lane, &self.inner.config);
                if batch.is_empty() {
                    lanes.remove(&key);
                    return;
                }
                batch
            };
            let result = self.publish(&key, &mut batch).await;
            if let Err(error) = &result {
                // Everything queued behind a failed publish fails with it, at once: it was not
                // sent, and a broker that just failed would make the last of them wait one
                // publish timeout per batch ahead of it.
                let queued = self
                    .inner
                    .lanes()
                    .get_mut(&key)
                    .map(std::mem::take)
                    .unwrap_or_default();
                for waiting in queued {
                    let _ = waiting.reply.send(Err(error.clone()));
                }
            }
            for waiting in batch {
                // The request may have gone (client hung up); its records are appended anyway.
                let _ = waiting.reply.send(result.clone());
            }
        }
    }

    /// One publish of `batch`: a lone message exactly as it was encoded, with the message id
    /// a request publishing alone would use; several spliced into one.
    async fn publish(&self, key: &LaneKey, batch: &mut [Waiting]) -> Result<Published, String> {
        count_publish(batch.len());
        let ids: Option<Vec<&Vec<Uuid>>> =
            batch.iter().map(|w| w.part.client_ids.as_ref()).collect();
        // When every part has client ids: an exact retry of the same merged set is still
        // recognised. Otherwise none, as for a request without client ids.
        let message_id = ids.map(|ids| message_id(key.account_id, ids));
        // The earliest time of receipt: the message says when its first record arrived.
        // The others arrived while the publishes before it were in flight, and on the same
        // UTC day (see `take_batch`), so the day their sealed fields name is still the
        // envelope's day.
        let earliest = (0..batch.len())
            .min_by_key(|&i| batch[i].part.received_at)
            .unwrap_or(0);
        let received_at = batch[earliest].part.received_at;
        let payload = match batch {
            [lone] => std::mem::take(&mut lone.part.payload),
            _ => {
                let encoded: Option<Vec<Encoded<'_>>> = batch
                    .iter()
                    .map(|w| {
                        w.records_start.map(|records_start| Encoded {
                            payload: &w.part.payload,
                            records_start,
                        })
                    })
                    .collect();
                let Some(encoded) = encoded else {
                    unreachable!("take_batch merges only spliceable messages")
                };
                splice::splice(encoded[earliest], &encoded)
            }
        };
        // The merged copy is what is sent: the parts' own payloads (up to max_bytes in all)
        // are not kept for the length of the publish.
        for waiting in batch.iter_mut() {
            waiting.part.payload = Vec::new();
        }
        self.inner
            .publisher
            .append(key.subject.clone(), message_id, payload)
            .await
            .map(|appended| Published {
                appended,
                received_at,
            })
    }
}

impl Inner {
    fn lanes(&self) -> MutexGuard<'_, HashMap<LaneKey, VecDeque<Waiting>>> {
        self.lanes.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Counts a publish and the requests' messages it carries: their ratio is how well writes are
/// merged (1 when nothing is; `max_records` / records per request at best).
fn count_publish(messages: usize) {
    metrics::counter!("ingest_log_publishes_total").increment(1);
    metrics::counter!("ingest_coalesced_messages_total").increment(messages as u64);
}

/// Takes the next publish from the front of `lane`, in arrival order: the first message, and
/// those after it that fit the limits, are spliceable and were received on the same UTC day.
fn take_batch(lane: &mut VecDeque<Waiting>, config: &CoalesceConfig) -> Vec<Waiting> {
    let Some(first) = lane.pop_front() else {
        return Vec::new();
    };
    let day = day_of(first.part.received_at);
    let (mut records, mut bytes) = (first.part.records, first.part.payload.len());
    let mergeable = first.records_start.is_some();
    let mut batch = vec![first];
    if !mergeable {
        return batch;
    }
    while let Some(next) = lane.front() {
        let fits = next.records_start.is_some()
            && day_of(next.part.received_at) == day
            && records + next.part.records <= config.max_records
            && bytes + next.part.payload.len() <= config.max_bytes;
        if !fits {
            break;
        }
        records += next.part.records;
        bytes += next.part.payload.len();
        batch.extend(lane.pop_front());
    }
    batch
}

struct LaneGuard<'a> {
    inner: &'a Inner,
    key: &'a LaneKey,
}

impl Drop for LaneGuard<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.inner.lanes().remove(self.key);
        }
    }
}

/// A log message id derived from the records' client ids (in order), so a retried request
/// is recognised by JetStream's duplicate window.
fn message_id<'a>(account_id: Uuid, ids: impl IntoIterator<Item = &'a Vec<Uuid>>) -> String {
    let mut hash = Sha256::new();
    hash.update(account_id.as_bytes());
    for id in ids.into_iter().flatten() {
        hash.update(id.as_bytes());
    }
    hex::encode(hash.finalize())
}

#[cfg(test)]
mod tests;
