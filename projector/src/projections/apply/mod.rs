//! Applying one chunk of the log to the read models: each model in its own transaction with
//! its own checkpoint, concurrently, at most `concurrency` at a time, so PostgreSQL works on
//! several connections (and cores) at once.
//!
//! The chunk is decoded and its personal fields opened once, before any transaction. Messages
//! no model can read are parked for every model first, in a short transaction of their own
//! (parking is idempotent, so a crash before the models commit only parks them again as a
//! no-op). Then every model runs [`model::apply_model`]: lock its checkpoint, apply what is
//! past it with every message PostgreSQL refuses isolated ([`isolate`]) and parked for that
//! model only, advance its checkpoint, commit. A model that [depends on](ReadModel::depends_on)
//! others (the erasure scrub) starts only once they committed the same chunk ([`schedule`]).
//!
//! An outage in one model's transaction fails the chunk after the others finished: their
//! checkpoints moved and the failed model's did not. The consumer resumes after the lowest
//! checkpoint ([`crate::checkpoint::resume_after`]), and each model applies only what is past
//! its own, so the next pass brings the failed model up without doubling anything in the
//! others. A model whose dependency failed does not run for that chunk, and runs on the next
//! pass after it.

mod isolate;
mod model;
mod schedule;

use super::{Delivered, Load, Positioned, ReadModel, names_of};
use crate::checkpoint::{self, EVERY_MODEL, Parked};
use crate::error::ProjectorError;
use model::Decoded;
pub(crate) use model::ModelOutcome;
use shared::envelope::{DecodeError, LogMessage};
use shared::privacy::Keyring;
use shared::subjects::Subjects;
use sqlx::PgPool;
use std::borrow::Cow;
use std::collections::BTreeMap;
use tokio::sync::Semaphore;

pub(crate) use isolate::apply_isolated;

/// What one chunk did, once every model committed it.
#[derive(Debug, Default)]
pub(crate) struct ChunkOutcome {
    /// The sequence every checkpoint now stands at or past.
    pub(crate) last_sequence: u64,
    /// `(messages, records)` applied (kept by at least one model), by record kind.
    pub(crate) messages_by_kind: BTreeMap<&'static str, (u64, u64)>,
    /// The reason code of every message parked (once per message, however many models
    /// refused it).
    pub(crate) parked: Vec<String>,
    /// Messages skipped because every checkpoint was already past them.
    pub(crate) skipped: u64,
}

/// How a chunk is applied: where, and how many models at once.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Applier<'a> {
    /// Every model's connections come from it. Table names are unqualified, so its
    /// connections' `search_path` decides where they go: the live projector writes `public`,
    /// a rebuild its own schema first (see [`crate::rebuild`]).
    pub(crate) pool: &'a PgPool,
    /// Opens every personal field (a destroyed key's fields read as erased); a keyring error
    /// is an outage, retried from the checkpoint, never parked.
    pub(crate) keyring: &'a Keyring,
    /// Read models applying at once, at most (`PROJECTOR_APPLY_CONCURRENCY`), when `slots`
    /// is `None`.
    pub(crate) concurrency: usize,
    /// Slots shared with other appliers (the live projector's partitions): each model's
    /// transaction holds one, so the process never runs more at once than there are slots.
    /// `None`: this chunk gets `concurrency` slots of its own.
    pub(crate) slots: Option<&'a Semaphore>,
    /// The partition of the log the chunk comes from: whose checkpoints move, and whose
    /// messages it applies.
    pub(crate) partition: checkpoint::Partition,
    /// Tells which partition a message belongs to: a partition's reader also receives the
    /// legacy (pre-partition) messages of every account, and applies only its own.
    pub(crate) subjects: &'a Subjects,
    /// Where this consumer last saw the partition's checkpoints committed (every model at or
    /// past it). A model found below it lost commits or was rewound: the chunk fails with
    /// [`ProjectorError::CheckpointBehind`] and the consumer resumes from the checkpoints,
    /// rather than applying past a gap. 0 checks nothing.
    pub(crate) committed: u64,
    /// How the folds store their rows: [`Load::Bulk`] only into a rebuild's copy.
    pub(crate) load: Load<'a>,
}

impl Applier<'_> {
    /// Applies `chunk` to `models` (see the module docs); `Err` when any model's transaction
    /// failed, after the others finished.
    pub(crate) async fn apply_chunk(
        &self,
        chunk: &[Delivered],
        models: &[&'static dyn ReadModel],
    ) -> Result<ChunkOutcome, ProjectorError> {
        let Some(prepared) = self.prepare(Cow::Borrowed(chunk), models).await? else {
            return Ok(ChunkOutcome::default());
        };
        let own_slots;
        let slots = match self.slots {
            Some(shared) => shared,
            None => {
                own_slots = Semaphore::new(self.concurrency.max(1));
                &own_slots
            }
        };
        let runs = schedule::in_dependency_order(models, slots, |model| {
            self.apply_model(model, &prepared)
        })
        .await;
        let mut outcomes = Vec::with_capacity(models.len());
        let mut failure = None;
        for (model, run) in models.iter().zip(runs) {
            match run {
                Some(Ok(outcome)) => outcomes.push(outcome),
                Some(Err(error)) => {
                    tracing::debug!(projection = model.name(), %error, "read model not applied");
                    failure.get_or_insert(error);
                }
                // A dependency failed; its error is the chunk's.
                None => tracing::debug!(projection = model.name(), "read model not applied"),
            }
        }
        if let Some(error) = failure {
            return Err(error);
        }
        // An erased player's key is gone from the bucket; drop this process's cached copy now
        // rather than when the watch reports it, so no later chunk opens their fields.
        prepared.forget_erased(self.keyring);
        Ok(prepared.tally(&outcomes))
    }

    /// Decodes `chunk` (this partition's messages of it) and opens its personal fields, and
    /// parks what no model can read: what every model's transaction then applies. `None` for
    /// an empty chunk.
    pub(crate) async fn prepare<'c>(
        &self,
        chunk: Cow<'c, [Delivered]>,
        models: &[&'static dyn ReadModel],
    ) -> Result<Option<Prepared<'c>>, ProjectorError> {
        let Some(last) = chunk.last().map(|d| d.stream_sequence) else {
            return Ok(None);
        };
        // Another partition's legacy messages are left out, but the checkpoints still move
        // past them (to the chunk's last sequence), so they are not read again.
        let owns = |d: &Delivered| self.subjects.partition_of_subject(&d.subject) == self.partition;
        let chunk: Cow<'c, [Delivered]> = if chunk.iter().all(owns) {
            chunk
        } else {
            Cow::Owned(chunk.iter().filter(|d| owns(d)).cloned().collect())
        };
        // Decoded and opened before any transaction: fetching keys never holds a checkpoint
        // lock, and a key bucket outage fails the chunk before anything was written.
        let readings = read_all(self.keyring, &chunk).await?;
        // Unlocked, only to leave out what every model holds already (a redelivery): each
        // model's transaction locks and reads its own checkpoint again.
        let floor = checkpoint::resume_after(self.pool, &names_of(models), self.partition).await?;
        let last_sequence = last.max(floor);

        let mut messages = Vec::with_capacity(chunk.len());
        let mut sources = Vec::with_capacity(chunk.len());
        let mut unreadable = Vec::new();
        for (index, (delivered, reading)) in chunk.iter().zip(readings).enumerate() {
            if delivered.stream_sequence <= floor {
                continue;
            }
            match reading {
                Ok(message) => {
                    messages.push(Positioned {
                        stream_sequence: delivered.stream_sequence,
                        message,
                    });
                    sources.push(index);
                }
                Err(error) => unreadable.push(unreadable_row(delivered, error)),
            }
        }
        // Counted once: a pass retried after an outage parks them again as a no-op.
        let mut newly_parked = Vec::new();
        if !unreadable.is_empty() {
            let mut tx = self.pool.begin().await?;
            newly_parked = checkpoint::park(&mut tx, &unreadable).await?;
            tx.commit().await?;
        }
        unreadable.retain(|p| newly_parked.contains(&p.stream_sequence));
        Ok(Some(Prepared {
            decoded: Decoded {
                chunk,
                messages,
                sources,
            },
            unreadable,
            last_sequence,
        }))
    }

    /// Applies `prepared` to `model` in its own transaction (see [`model::apply_model`]); the
    /// caller holds a slot, and has seen the models it depends on commit the same chunk.
    pub(crate) async fn apply_model(
        &self,
        model: &'static dyn ReadModel,
        prepared: &Prepared<'_>,
    ) -> Result<ModelOutcome, ProjectorError> {
        let mut outcomes = self.apply_model_to(model, &[prepared]).await?;
        Ok(outcomes.pop().expect("one outcome per chunk"))
    }

    /// Applies `chunks` (consecutive chunks of the partition, in log order) to `model` in one
    /// transaction of its own (see [`model::apply_model`]): a model behind the others takes
    /// what waits for it at once. Returns each chunk's outcome, in their order. The caller
    /// holds a slot, and has seen the models it depends on commit every one of the chunks.
    pub(crate) async fn apply_model_to(
        &self,
        model: &'static dyn ReadModel,
        chunks: &[&Prepared<'_>],
    ) -> Result<Vec<ModelOutcome>, ProjectorError> {
        let at = model::At {
            partition: self.partition,
            committed: self.committed,
            last_sequence: chunks.iter().map(|c| c.last_sequence).max().unwrap_or(0),
            load: self.load,
        };
        let decoded: Vec<&Decoded<'_>> = chunks.iter().map(|c| &c.decoded).collect();
        model::apply_model(self.pool, model, &decoded, at).await
    }
}

/// A chunk decoded and opened, its unreadable messages parked: what each model's
/// transaction applies ([`Applier::prepare`]).
pub(crate) struct Prepared<'c> {
    decoded: Decoded<'c>,
    /// The parked rows of unreadable messages this chunk added.
    unreadable: Vec<Parked>,
    /// Where every model's checkpoint moves to.
    last_sequence: u64,
}

impl Prepared<'_> {
    /// Drops this process's cached keys of the players the chunk erases.
    pub(crate) fn forget_erased(&self, keyring: &Keyring) {
        let messages = self.decoded.messages.iter().map(|p| &p.message);
        for erased in super::erasure::erasures(messages) {
            keyring.forget_player(erased.account_id, erased.player_uuid);
        }
    }

    /// What the chunk did, from what every model's committed transaction did (`outcomes`).
    pub(crate) fn tally(&self, outcomes: &[ModelOutcome]) -> ChunkOutcome {
        tally(
            &self.decoded.chunk,
            &self.decoded,
            &self.unreadable,
            outcomes,
            self.last_sequence,
        )
    }
}

/// The parked row of a message no model can read: for every model.
fn unreadable_row(delivered: &Delivered, error: DecodeError) -> Parked {
    let error = ProjectorError::from(error);
    tracing::warn!(
        stream_sequence = delivered.stream_sequence,
        subject = %delivered.subject,
        error = %error,
        "parking a log message that can never be applied"
    );
    Parked {
        stream_sequence: delivered.stream_sequence,
        projection: EVERY_MODEL,
        subject: delivered.subject.clone(),
        reason: format!("{}: {error}", error.reason()),
        sqlstate: None,
        payload: delivered.payload.clone(),
    }
}

/// What the chunk did, from what each model's transaction did; `unreadable` holds the rows
/// this chunk added.
fn tally(
    chunk: &[Delivered],
    decoded: &Decoded<'_>,
    unreadable: &[Parked],
    outcomes: &[ModelOutcome],
    last_sequence: u64,
) -> ChunkOutcome {
    let lowest = outcomes.iter().map(|o| o.checkpoint).min().unwrap_or(0);
    let mut outcome = ChunkOutcome {
        last_sequence,
        skipped: chunk.iter().filter(|d| d.stream_sequence <= lowest).count() as u64,
        ..ChunkOutcome::default()
    };
    for parked in unreadable {
        outcome
            .parked
            .push(parked.reason.split(':').next().unwrap_or("").to_owned());
    }
    for (index, positioned) in decoded.messages.iter().enumerate() {
        let sequence = positioned.stream_sequence;
        let pending = outcomes.iter().filter(|o| o.checkpoint < sequence).count();
        let refusals: Vec<_> = outcomes
            .iter()
            .filter_map(|o| o.refused.iter().find(|(refused, _)| *refused == index))
            .map(|(_, refusal)| refusal)
            .collect();
        // One count per message, under the reason of the first model that refused it.
        if let Some(first) = refusals.first() {
            outcome.parked.push(first.reason());
        }
        // Applied when a model it was pending for kept it.
        if pending == refusals.len() {
            continue;
        }
        let message = &positioned.message;
        tracing::debug!(
            stream_sequence = sequence,
            account_id = %message.account_id,
            kind = message.kind().as_str(),
            records = message.batch.len(),
            "applied"
        );
        let entry = outcome
            .messages_by_kind
            .entry(message.kind().as_str())
            .or_default();
        entry.0 += 1;
        entry.1 += message.batch.len() as u64;
    }
    outcome
}

/// Decodes every message of `chunk` and opens the sealed personal fields of those that
/// decode, in one [`Keyring::open`] call; the undecodable ones stay errors, to be parked.
async fn read_all(
    keyring: &Keyring,
    chunk: &[Delivered],
) -> Result<Vec<Result<LogMessage, DecodeError>>, ProjectorError> {
    let mut messages = Vec::with_capacity(chunk.len());
    let mut unreadable = BTreeMap::new();
    for (index, delivered) in chunk.iter().enumerate() {
        match LogMessage::decode(&delivered.payload) {
            Ok(message) => messages.push(message),
            Err(error) => {
                unreadable.insert(index, error);
            }
        }
    }
    keyring.open(&mut messages).await?;
    let mut messages = messages.into_iter();
    Ok((0..chunk.len())
        .filter_map(|index| match unreadable.remove(&index) {
            Some(error) => Some(Err(error)),
            None => messages.next().map(Ok),
        })
        .collect())
}
