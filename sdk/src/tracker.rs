//! A non-blocking event tracker: `track` queues, a background task sends with the sync cycle.
//!
//! `track` never blocks and never does HTTP: it puts the event on a bounded queue, or refuses
//! and counts it when the queue is full. A background task drains the queue every
//! `sync_interval` (and on `flush` and `shutdown`), sending batches of at most 1,000 events
//! through [`PluginClient`], which retries with backoff and `Retry-After`. Every event has its
//! UUIDv7 id from the moment it is tracked, so a batch sent again after a failed cycle is
//! recognised and stored once.

use crate::error::SdkError;
use crate::plugin::{MAX_BATCH, PluginClient};
use crate::records::{CustomEvent, PluginRecord};
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio::time::MissedTickBehavior;

/// How the tracker queues and sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrackerConfig {
    /// How often queued events are sent (the account's sync interval; default 15 s).
    pub sync_interval: Duration,
    /// Events held at most, queued or waiting for a retry; `track` refuses beyond it.
    pub capacity: usize,
    /// Events per request, 1..=1,000.
    pub batch_size: usize,
}

impl Default for TrackerConfig {
    fn default() -> Self {
        TrackerConfig {
            sync_interval: Duration::from_secs(15),
            capacity: 10_000,
            batch_size: MAX_BATCH,
        }
    }
}

/// Why `track` refused an event.
#[derive(Debug, thiserror::Error)]
pub enum TrackError {
    /// The queue is full (the service is slow or down); the event was dropped and counted.
    #[error("the event queue is full; event dropped")]
    QueueFull(Box<CustomEvent>),
    /// The tracker has been shut down.
    #[error("the tracker is shut down")]
    Closed(Box<CustomEvent>),
}

/// Counters of what the tracker did, since it started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TrackerStats {
    /// Events stored by the service.
    pub accepted: u64,
    /// Events the service already had (an earlier attempt got through).
    pub duplicates: u64,
    /// Events the service refused (invalid); they are not sent again.
    pub rejected: u64,
    /// Events dropped by `track` because the queue was full.
    pub dropped: u64,
    /// Events still unsent when the tracker shut down.
    pub lost: u64,
}

#[derive(Debug, Default)]
struct Counters {
    accepted: AtomicU64,
    duplicates: AtomicU64,
    rejected: AtomicU64,
    dropped: AtomicU64,
    lost: AtomicU64,
}

impl Counters {
    fn snapshot(&self) -> TrackerStats {
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        TrackerStats {
            accepted: load(&self.accepted),
            duplicates: load(&self.duplicates),
            rejected: load(&self.rejected),
            dropped: load(&self.dropped),
            lost: load(&self.lost),
        }
    }
}

enum Command {
    Flush(oneshot::Sender<()>),
    Shutdown(oneshot::Sender<()>),
}

/// Queues custom events and sends them in the background; cheap to clone.
#[derive(Debug, Clone)]
pub struct EventTracker {
    queue: mpsc::Sender<CustomEvent>,
    commands: mpsc::Sender<Command>,
    counters: Arc<Counters>,
    task: Arc<tokio::sync::Mutex<Option<JoinHandle<()>>>>,
}

impl EventTracker {
    /// Starts the background sender on the current Tokio runtime.
    pub fn spawn(client: PluginClient, config: TrackerConfig) -> EventTracker {
        let capacity = config.capacity.max(1);
        let (queue, events) = mpsc::channel(capacity);
        let (commands, command_rx) = mpsc::channel(16);
        let counters = Arc::new(Counters::default());
        let sender = Sender {
            client,
            config: TrackerConfig {
                capacity,
                batch_size: config.batch_size.clamp(1, MAX_BATCH),
                ..config
            },
            events,
            pending: VecDeque::new(),
            counters: counters.clone(),
        };
        let task = tokio::spawn(sender.run(command_rx));
        EventTracker {
            queue,
            commands,
            counters,
            task: Arc::new(tokio::sync::Mutex::new(Some(task))),
        }
    }

    /// Queues `event` for the next sync cycle without blocking; gives it a UUIDv7 id when it
    /// has none. When the queue is full the event is dropped, counted, and handed back.
    pub fn track(&self, mut event: CustomEvent) -> Result<(), TrackError> {
        event.ensure_id();
        self.queue.try_send(event).map_err(|error| match error {
            mpsc::error::TrySendError::Full(event) => {
                self.counters.dropped.fetch_add(1, Ordering::Relaxed);
                TrackError::QueueFull(Box::new(event))
            }
            mpsc::error::TrySendError::Closed(event) => TrackError::Closed(Box::new(event)),
        })
    }

    /// Sends everything queued so far now, and returns once that attempt is over.
    pub async fn flush(&self) {
        let (done, wait) = oneshot::channel();
        if self.commands.send(Command::Flush(done)).await.is_ok() {
            let _ = wait.await;
        }
    }

    /// Sends what is queued, then stops the background task. Events still unsent after that
    /// last attempt are counted in [`TrackerStats::lost`].
    pub async fn shutdown(&self) -> TrackerStats {
        let (done, wait) = oneshot::channel();
        if self.commands.send(Command::Shutdown(done)).await.is_ok() {
            let _ = wait.await;
        }
        if let Some(task) = self.task.lock().await.take()
            && let Err(error) = task.await
        {
            tracing::error!(%error, "the event tracker's task failed");
        }
        self.stats()
    }

    /// The counters now.
    pub fn stats(&self) -> TrackerStats {
        self.counters.snapshot()
    }
}

/// The background half: owns the queue's receiver and the events awaiting a retry.
struct Sender {
    client: PluginClient,
    config: TrackerConfig,
    events: mpsc::Receiver<CustomEvent>,
    /// Events taken off the queue and not yet stored, oldest first.
    pending: VecDeque<CustomEvent>,
    counters: Arc<Counters>,
}

impl Sender {
    async fn run(mut self, mut commands: mpsc::Receiver<Command>) {
        let mut ticker = tokio::time::interval(self.config.sync_interval);
        ticker.set_missed_tick_behavior(MissedTickBehavior::Delay);
        ticker.tick().await;
        loop {
            tokio::select! {
                _ = ticker.tick() => self.sync().await,
                command = commands.recv() => match command {
                    Some(Command::Flush(done)) => {
                        self.sync().await;
                        let _ = done.send(());
                    }
                    Some(Command::Shutdown(done)) => {
                        self.stop().await;
                        let _ = done.send(());
                        return;
                    }
                    // Every handle is gone: nobody can flush or shut down any more.
                    None => {
                        self.stop().await;
                        return;
                    }
                },
            }
        }
    }

    async fn stop(&mut self) {
        self.events.close();
        self.sync().await;
        let lost = self.pending.len() as u64;
        if lost > 0 {
            tracing::warn!(lost, "event tracker stopped with unsent events");
            self.counters.lost.fetch_add(lost, Ordering::Relaxed);
        }
    }

    /// One cycle: take what is queued, send it in batches; a batch that fails for a retryable
    /// reason stays pending (same ids) for the next cycle.
    async fn sync(&mut self) {
        while let Ok(event) = self.events.try_recv() {
            self.pending.push_back(event);
        }
        while !self.pending.is_empty() {
            let take = self.pending.len().min(self.config.batch_size);
            let batch: Vec<CustomEvent> = self.pending.iter().take(take).cloned().collect();
            match self.client.send_batch(batch).await {
                Ok(report) => {
                    self.pending.drain(..take);
                    let c = &self.counters;
                    c.accepted.fetch_add(report.accepted, Ordering::Relaxed);
                    c.duplicates.fetch_add(report.duplicates, Ordering::Relaxed);
                    c.rejected
                        .fetch_add(report.rejected.len() as u64, Ordering::Relaxed);
                }
                Err(SdkError::Api { status, problem }) if status != 408 => {
                    // Refused as a whole (e.g. every event invalid): sending it again cannot help.
                    tracing::warn!(status, code = %problem.code, detail = %problem.detail, events = take, "events refused");
                    self.pending.drain(..take);
                    self.counters
                        .rejected
                        .fetch_add(take as u64, Ordering::Relaxed);
                }
                Err(error) => {
                    tracing::warn!(%error, events = self.pending.len(), "events not sent; retrying next cycle");
                    self.trim_pending();
                    return;
                }
            }
        }
    }

    /// Keeps the events awaiting a retry within capacity, dropping the oldest.
    fn trim_pending(&mut self) {
        let over = self.pending.len().saturating_sub(self.config.capacity);
        if over > 0 {
            self.pending.drain(..over);
            self.counters
                .dropped
                .fetch_add(over as u64, Ordering::Relaxed);
        }
    }
}
