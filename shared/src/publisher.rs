//! Appending log messages to JetStream: ingest's plugin writes and query-api's staff notes
//! both go through [`Publisher::append`], so both wait for the stream's ack the same way.
//!
//! Requests publish concurrently: each sends its messages and awaits its own acks, so many
//! requests' publishes and acks are in flight at once over one connection (no lock, no
//! one-at-a-time round trip).

use async_nats::jetstream::{self, message::PublishMessage};
use std::time::{Duration, Instant};

/// A handle to the event log for writers.
#[derive(Clone, Debug)]
pub struct Publisher {
    client: async_nats::Client,
    jetstream: jetstream::Context,
    stream: String,
    timeout: Duration,
    metric: &'static str,
}

/// Where a message landed.
#[derive(Debug, Clone, Copy)]
pub struct Appended {
    /// Its stream sequence.
    pub sequence: u64,
    /// JetStream had already stored a message with the same id (inside the duplicate window).
    pub duplicate: bool,
}

impl Publisher {
    /// A publisher for `stream`, waiting at most `timeout` for each ack; each append's time
    /// is recorded in the histogram named `metric` (e.g. `ingest_publish_duration_seconds`).
    pub fn new(
        client: async_nats::Client,
        stream: String,
        timeout: Duration,
        metric: &'static str,
    ) -> Self {
        let mut jetstream = jetstream::new(client.clone());
        jetstream.set_timeout(timeout);
        Self {
            client,
            jetstream,
            stream,
            timeout,
            metric,
        }
    }

    /// Whether the connection to NATS is up right now.
    pub fn is_connected(&self) -> bool {
        self.client.connection_state() == async_nats::connection::State::Connected
    }

    /// Appends one message and waits for JetStream's ack. Errors are for logs, not clients.
    pub async fn append(
        &self,
        subject: String,
        message_id: Option<String>,
        payload: Vec<u8>,
    ) -> Result<Appended, String> {
        // Fail fast while disconnected: the client would otherwise buffer the publish.
        if !self.is_connected() {
            return Err("not connected to NATS".into());
        }
        let started = Instant::now();
        let mut publish = PublishMessage::build()
            .payload(payload.into())
            .expected_stream(&self.stream);
        if let Some(id) = message_id {
            publish = publish.message_id(id);
        }
        let result = tokio::time::timeout(self.timeout, async {
            let ack = self
                .jetstream
                .send_publish(subject, publish)
                .await
                .map_err(|e| e.to_string())?;
            ack.await.map_err(|e| e.to_string())
        })
        .await;
        let outcome = match result {
            Ok(Ok(ack)) => Ok(Appended {
                sequence: ack.sequence,
                duplicate: ack.duplicate,
            }),
            Ok(Err(error)) => Err(error),
            Err(_) => Err(format!("no ack within {:?}", self.timeout)),
        };
        let label = if outcome.is_ok() { "ok" } else { "error" };
        metrics::histogram!(self.metric, "outcome" => label)
            .record(started.elapsed().as_secs_f64());
        outcome
    }
}
