//! The replay's side of a rebuild: applying the log to the copy, and showing how far it got.

use crate::error::ProjectorError;
use crate::projections::{self, Delivered, ReadModel};
use async_nats::jetstream::consumer::pull::OrderedError;
use indicatif::{ProgressBar, ProgressStyle};
use shared::privacy::Keyring;
use sqlx::PgPool;
use std::time::{Duration, Instant};

/// A chunk of the log as the ordered consumer delivers it.
pub(super) type Chunk = Vec<Result<async_nats::jetstream::Message, OrderedError>>;

/// The replay's state: where the copy stands and how it is shown.
pub(super) struct Replay<'a> {
    pub(super) pool: &'a PgPool,
    /// Opens the personal fields of each chunk.
    pub(super) keyring: &'a Keyring,
    pub(super) models: &'a [&'static dyn ReadModel],
    /// Read models applying a chunk at once (the copy's pool holds that many connections).
    pub(super) concurrency: usize,
    pub(super) position: u64,
    /// The log's subjects (the partition of each message).
    pub(super) subjects: &'a shared::subjects::Subjects,
    pub(super) bar: ProgressBar,
    pub(super) logged_at: Instant,
}

impl Replay<'_> {
    /// Applies one chunk of the log to the copy; a broken delivery fails the rebuild.
    pub(super) async fn apply(&mut self, chunk: Chunk) -> anyhow::Result<()> {
        let mut delivered = Vec::with_capacity(chunk.len());
        for message in chunk {
            let message = message.map_err(ProjectorError::event_log)?;
            let info = message.info().map_err(ProjectorError::event_log)?;
            delivered.push(Delivered {
                stream_sequence: info.stream_sequence,
                subject: message.subject.to_string(),
                payload: message.payload.clone(),
            });
        }
        // The live projector's path: each model in its own transaction on the copy's pool,
        // every connection of which puts the copy's schema first on its search_path.
        let applier = projections::Applier {
            pool: self.pool,
            keyring: self.keyring,
            concurrency: self.concurrency,
            partition: 0,
            subjects: self.subjects,
        };
        let outcome = applier.apply_chunk(&delivered, self.models).await?;
        self.position = self.position.max(outcome.last_sequence);
        self.bar.set_position(self.position);
        Ok(())
    }

    /// Updates the bar's length to the stream's end, and logs progress when there is no bar.
    pub(super) fn report(&mut self, stream_last: u64) {
        self.bar.set_length(stream_last.max(self.position));
        if self.bar.is_hidden() && self.logged_at.elapsed() >= Duration::from_secs(5) {
            self.logged_at = Instant::now();
            tracing::info!(
                position = self.position,
                stream_last_sequence = stream_last,
                messages_per_second = self.bar.per_sec() as u64,
                "rebuild progress"
            );
        }
    }
}

/// A progress bar with rate and ETA, or a hidden one.
pub(super) fn progress_bar(shown: bool) -> ProgressBar {
    if !shown {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(0);
    if let Ok(style) = ProgressStyle::with_template(
        "{spinner} {elapsed_precise} [{bar:40}] {human_pos}/{human_len} log messages \
         ({per_sec}, eta {eta})",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}
