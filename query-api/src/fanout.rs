//! Live events: one upstream subscription to the event log per process, fanned out to every
//! SSE subscriber, plus backfill from the log for resumption.
//!
//! Events come straight from the log (not from PostgreSQL), so a subscriber sees an event as
//! soon as its write is acknowledged, and `Last-Event-ID` resumes from the log itself without
//! a gap, even for events the projector has not stored yet. The fan-out is a bounded broadcast
//! ring: a slow subscriber falls behind on its own (it is told, then backfills from the log)
//! and never slows the others.

use async_nats::jetstream::{self, consumer::DeliverPolicy, consumer::pull::OrderedConfig};
use futures::StreamExt;
use shared::envelope::{LogMessage, stream_sequence_of};
use shared::event_log::EventLogConfig;
use shared::privacy::Keyring;
use shared::records::RecordKind;
use shared::subjects::Subjects;
use shared::timeline::{TimelineEvent, events_of};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{broadcast, mpsc};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

/// Events the ring holds for subscribers that are behind.
const RING_CAPACITY: usize = 8192;

/// One timeline event, with its API JSON rendered once for every subscriber.
#[derive(Debug)]
pub struct LiveEvent {
    /// The event.
    pub event: TimelineEvent,
    /// `TimelineEvent::to_api_json`, computed once.
    pub json: String,
}

/// The process's live feed of the event log.
#[derive(Clone)]
pub struct LiveEvents {
    ring: broadcast::Sender<Arc<LiveEvent>>,
    jetstream: jetstream::Context,
    log: EventLogConfig,
    /// The log's subjects, with the stream's number of partitions.
    subjects: Subjects,
    /// Opens the personal fields of each message read from the log.
    keyring: Keyring,
}

impl std::fmt::Debug for LiveEvents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveEvents")
            .field("subscribers", &self.ring.receiver_count())
            .finish()
    }
}

impl LiveEvents {
    /// Starts following the end of the log until `shutdown`; every message read is opened
    /// with `keyring` (whose watch the caller runs), so an erased player's fields read as
    /// erased live and in every backfill.
    pub fn start(
        jetstream: jetstream::Context,
        log: EventLogConfig,
        subjects: Subjects,
        keyring: Keyring,
        shutdown: CancellationToken,
    ) -> LiveEvents {
        let (ring, _) = broadcast::channel(RING_CAPACITY);
        let live = LiveEvents {
            ring,
            jetstream,
            log,
            subjects,
            keyring,
        };
        tokio::spawn(live.clone().follow(shutdown));
        live
    }

    /// A receiver of every event appended from now on (all accounts: filter on receipt).
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<LiveEvent>> {
        self.ring.subscribe()
    }

    /// Follows the log, re-opening after errors from the next unread sequence (no gap).
    async fn follow(self, shutdown: CancellationToken) {
        let mut next: Option<u64> = None;
        let mut backoff = Duration::from_millis(100);
        while !shutdown.is_cancelled() {
            let result = tokio::select! {
                _ = shutdown.cancelled() => return,
                result = self.follow_once(&mut next) => result,
            };
            if let Err(error) = result {
                tracing::warn!(%error, "live event feed interrupted; re-opening");
                tokio::select! {
                    _ = shutdown.cancelled() => return,
                    _ = tokio::time::sleep(backoff) => {}
                }
                backoff = (backoff * 2).min(Duration::from_secs(5));
            }
        }
    }

    async fn follow_once(&self, next: &mut Option<u64>) -> anyhow::Result<()> {
        let deliver_policy = match *next {
            Some(start_sequence) => DeliverPolicy::ByStartSequence { start_sequence },
            None => DeliverPolicy::New,
        };
        let stream = self.jetstream.get_stream(&self.log.stream).await?;
        let consumer = stream
            .create_consumer(OrderedConfig {
                filter_subjects: self.subjects.all_events(),
                deliver_policy,
                ..Default::default()
            })
            .await?;
        let mut messages = consumer.messages().await?;
        while let Some(message) = messages.next().await {
            let message = message?;
            let sequence = message
                .info()
                .map_err(|e| anyhow::anyhow!("{e}"))?
                .stream_sequence;
            // Undecodable messages are the projector's to park; the feed skips them.
            let Ok(mut decoded) = LogMessage::decode(&message.payload) else {
                *next = Some(sequence + 1);
                continue;
            };
            // A key bucket outage re-opens the feed at this message: nothing is sent sealed.
            self.keyring
                .open(std::slice::from_mut(&mut decoded))
                .await?;
            *next = Some(sequence + 1);
            for event in events_of(sequence, &decoded) {
                let json = event.to_api_json();
                // No receivers is fine: nobody is watching.
                let _ = self.ring.send(Arc::new(LiveEvent { event, json }));
            }
        }
        anyhow::bail!("the live consumer ended")
    }

    /// Sends every event of `account` after timeline position `after_seq` that is in the log
    /// now and passes `keep`, in order, into `out` (waiting for room: backfill reads the log
    /// at the subscriber's pace). Returns the highest position read, or `None` once the
    /// subscriber is gone.
    pub async fn backfill(
        &self,
        account: Uuid,
        after_seq: i64,
        keep: impl Fn(&TimelineEvent) -> bool,
        out: &mpsc::Sender<Feed>,
    ) -> anyhow::Result<Option<i64>> {
        let stream = self.jetstream.get_stream(&self.log.stream).await?;
        let consumer = stream
            .create_consumer(OrderedConfig {
                filter_subjects: self.subjects.account_events(account),
                deliver_policy: DeliverPolicy::ByStartSequence {
                    start_sequence: stream_sequence_of(after_seq).max(1),
                },
                ..Default::default()
            })
            .await?;
        let mut reached = after_seq;
        if consumer.cached_info().num_pending == 0 {
            return Ok(Some(reached));
        }
        let mut messages = consumer.messages().await?;
        while let Some(message) = messages.next().await {
            let message = message?;
            let info = message.info().map_err(|e| anyhow::anyhow!("{e}"))?;
            let (sequence, pending) = (info.stream_sequence, info.pending);
            if let Ok(mut decoded) = LogMessage::decode(&message.payload) {
                self.keyring
                    .open(std::slice::from_mut(&mut decoded))
                    .await?;
                for event in events_of(sequence, &decoded) {
                    if event.seq <= reached {
                        continue;
                    }
                    reached = event.seq;
                    if keep(&event) {
                        let json = event.to_api_json();
                        if out
                            .send(Feed::Event(Arc::new(LiveEvent { event, json })))
                            .await
                            .is_err()
                        {
                            return Ok(None);
                        }
                    }
                }
            }
            if pending == 0 {
                break;
            }
        }
        Ok(Some(reached))
    }
}

impl LiveEvents {
    /// The log's last stream sequence now: a page that shows what the read models hold hands
    /// it to its live stream, which starts right after it (nothing written between the page
    /// and the stream's opening is missed).
    pub async fn log_position(&self) -> anyhow::Result<u64> {
        let mut stream = self.jetstream.get_stream(&self.log.stream).await?;
        Ok(stream.info().await?.state.last_sequence)
    }

    /// `account`'s log messages of `kinds`, in log order, from stream sequence `start` (the
    /// end of the log when `None`), with their stream sequences.
    ///
    /// For a stream that needs records the timeline (and so the ring) does not carry, such as
    /// anti-cheat flags, in one order with those it does: one ephemeral ordered consumer per
    /// call, filtered by the server so only those kinds travel, read at the caller's pace.
    /// Undecodable messages are skipped (they are the projector's to park); personal fields are
    /// opened (an outage of the key buckets is an error item).
    pub async fn records(
        &self,
        account: Uuid,
        kinds: &[RecordKind],
        start: Option<u64>,
    ) -> anyhow::Result<impl futures::Stream<Item = anyhow::Result<(u64, LogMessage)>> + Send + use<>>
    {
        let deliver_policy = match start {
            Some(start_sequence) => DeliverPolicy::ByStartSequence {
                start_sequence: start_sequence.max(1),
            },
            None => DeliverPolicy::New,
        };
        let stream = self.jetstream.get_stream(&self.log.stream).await?;
        let consumer = stream
            .create_consumer(OrderedConfig {
                filter_subjects: kinds
                    .iter()
                    .flat_map(|kind| self.subjects.account_kind_events(account, *kind))
                    .collect(),
                deliver_policy,
                ..Default::default()
            })
            .await?;
        let messages = consumer.messages().await?;
        let keyring = self.keyring.clone();
        Ok(messages.filter_map(move |message| {
            let keyring = keyring.clone();
            async move {
                let decoded = message.map_err(anyhow::Error::from).and_then(|message| {
                    let sequence = message
                        .info()
                        .map_err(|e| anyhow::anyhow!("{e}"))?
                        .stream_sequence;
                    Ok(LogMessage::decode(&message.payload)
                        .ok()
                        .map(|decoded| (sequence, decoded)))
                });
                match decoded {
                    Ok(Some((sequence, mut decoded))) => Some(
                        keyring
                            .open(std::slice::from_mut(&mut decoded))
                            .await
                            .map(|()| (sequence, decoded))
                            .map_err(anyhow::Error::from),
                    ),
                    Ok(None) => None,
                    Err(error) => Some(Err(error)),
                }
            }
        }))
    }
}

/// What a subscriber's stream carries.
#[derive(Debug)]
pub enum Feed {
    /// An event to send.
    Event(Arc<LiveEvent>),
    /// The subscriber fell behind the live ring; `skipped` events (of all accounts) passed
    /// it by. It backfills from the log right after, so nothing of its own is lost.
    Missed {
        /// How many ring entries it missed.
        skipped: u64,
    },
}
