//! Applying one chunk of the log to the read models in one transaction, with every message
//! PostgreSQL refuses isolated and parked instead of halting the log.
//!
//! The chunk is first applied whole under a savepoint: one batched statement per model, the
//! fast path. If PostgreSQL refuses the data ([`refuses_data`]: a NUL in text, a value out of
//! range, an index entry too large), the savepoint is rolled back and the chunk is split in
//! halves, each applied under its own savepoint, down to the single messages refused. Each of
//! those is parked as a whole, for every read model, so the models never disagree about which
//! messages they hold; everything around it is applied. One bad message among n costs about
//! 2·log2(n) extra attempts, all in the same transaction, so the checkpoint still moves exactly
//! when the writes it covers commit. Anything else (an outage) fails the whole transaction and
//! the consumer retries from the checkpoint, skipping nothing.

use super::{Delivered, Positioned, ReadModel, names_of};
use crate::checkpoint::{self, Parked};
use crate::error::{ProjectorError, refusal_reason, refuses_data, sqlstate};
use shared::envelope::{DecodeError, LogMessage};
use shared::privacy::Keyring;
use sqlx::{Connection, PgConnection, PgPool};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// What one committed chunk did.
#[derive(Debug, Default)]
pub(crate) struct ChunkOutcome {
    /// The sequence every checkpoint now stands at or past.
    pub(crate) last_sequence: u64,
    /// `(messages, records)` applied, by record kind.
    pub(crate) messages_by_kind: BTreeMap<&'static str, (u64, u64)>,
    /// The reason code of every message parked.
    pub(crate) parked: Vec<String>,
    /// Messages skipped because every checkpoint was already past them.
    pub(crate) skipped: u64,
}

/// A message PostgreSQL refused: the read model whose statement failed, and how.
#[derive(Debug)]
pub(crate) struct Refusal {
    /// The read model whose statement was refused (none of them keeps the message).
    pub(crate) model: &'static dyn ReadModel,
    /// PostgreSQL's (or the driver's) error.
    pub(crate) error: sqlx::Error,
}

impl Refusal {
    /// `sqlstate_<code>` (or `unencodable`): the parked row's reason code and metric label.
    pub(crate) fn reason(&self) -> String {
        refusal_reason(&self.error)
    }

    /// The parked row's `reason`: the code, the read model and PostgreSQL's message.
    pub(crate) fn describe(&self) -> String {
        format!(
            "{}: read model {}: {}",
            self.reason(),
            self.model.name(),
            self.error
        )
    }

    /// The SQLSTATE, when PostgreSQL answered.
    pub(crate) fn sqlstate(&self) -> Option<String> {
        sqlstate(&self.error)
    }
}

/// Applies a chunk of delivered messages to `models` in ONE transaction, parks the unreadable
/// and the refused ones, and advances their checkpoints to the chunk's last sequence. The
/// folds see every personal field opened with `keyring` (a destroyed key's fields read as
/// erased); a keyring error is an outage, retried from the checkpoint, never parked.
///
/// Table names are unqualified, so the connection's `search_path` decides where they go: the
/// live projector writes `public`, a rebuild its own schema first (see [`crate::rebuild`]).
pub(crate) async fn apply_chunk(
    pool: &PgPool,
    keyring: &Keyring,
    chunk: &[Delivered],
    models: &[&'static dyn ReadModel],
) -> Result<ChunkOutcome, ProjectorError> {
    let Some(last) = chunk.last() else {
        return Ok(ChunkOutcome::default());
    };
    // Decoded and opened before the transaction: fetching keys never holds the checkpoint
    // locks, and a key bucket outage fails the chunk before anything was written.
    let readings = read_all(keyring, chunk).await?;

    let names = names_of(models);
    let mut tx = pool.begin().await?;
    let checkpoints = checkpoint::lock(&mut tx, &names).await?;
    let floor = checkpoints.iter().copied().min().unwrap_or(0);

    let mut outcome = ChunkOutcome {
        last_sequence: last.stream_sequence.max(floor),
        ..ChunkOutcome::default()
    };
    let mut decoded = Vec::with_capacity(chunk.len());
    let mut sources = Vec::with_capacity(chunk.len());
    let mut parked = Vec::new();
    for (delivered, reading) in chunk.iter().zip(readings) {
        // Defensive: a redelivery (or another projector process) may already be past it.
        if delivered.stream_sequence <= floor {
            outcome.skipped += 1;
            continue;
        }
        match reading {
            Ok(message) => {
                decoded.push(Positioned {
                    stream_sequence: delivered.stream_sequence,
                    message,
                });
                sources.push(delivered);
            }
            Err(error) => {
                let error = ProjectorError::from(error);
                tracing::warn!(
                    stream_sequence = delivered.stream_sequence,
                    subject = %delivered.subject,
                    error = %error,
                    "parking a log message that can never be applied"
                );
                outcome.parked.push(error.reason());
                parked.push(Parked {
                    stream_sequence: delivered.stream_sequence,
                    subject: delivered.subject.clone(),
                    reason: format!("{}: {error}", error.reason()),
                    sqlstate: None,
                    payload: delivered.payload.clone(),
                });
            }
        }
    }

    let targets: Vec<(&'static dyn ReadModel, u64)> =
        models.iter().copied().zip(checkpoints).collect();
    let refused = apply_isolated(&mut tx, &targets, &decoded).await?;
    let refused_at: BTreeSet<usize> = refused.iter().map(|(index, _)| *index).collect();
    for (index, positioned) in decoded.iter().enumerate() {
        if refused_at.contains(&index) {
            continue;
        }
        let message = &positioned.message;
        tracing::debug!(
            stream_sequence = positioned.stream_sequence,
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
    for (index, refusal) in refused {
        let (positioned, source) = (&decoded[index], sources[index]);
        tracing::warn!(
            stream_sequence = positioned.stream_sequence,
            subject = %source.subject,
            account_id = %positioned.message.account_id,
            projection = refusal.model.name(),
            error = %refusal.error,
            "parking a log message PostgreSQL refuses; the rest of the chunk is applied"
        );
        outcome.parked.push(refusal.reason());
        parked.push(Parked {
            stream_sequence: positioned.stream_sequence,
            subject: source.subject.clone(),
            reason: refusal.describe(),
            sqlstate: refusal.sqlstate(),
            payload: source.payload.clone(),
        });
    }
    checkpoint::park(&mut tx, &parked).await?;
    checkpoint::advance(&mut tx, &names, outcome.last_sequence).await?;
    tx.commit().await?;
    // An erased player's key is gone from the bucket; drop this process's cached copy now
    // rather than when the watch reports it, so no later chunk opens their fields.
    for erased in super::erasure::erasures(decoded.iter().map(|p| &p.message)) {
        keyring.forget_player(erased.account_id, erased.player_uuid);
    }
    Ok(outcome)
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

/// Applies `messages` (in log order) to each `(model, checkpoint)` of `targets` past that
/// checkpoint, inside the caller's transaction, and returns the messages PostgreSQL refused
/// (by index, in order), none of whose writes are kept. An outage is an `Err`: the caller's
/// transaction is then unusable and must be dropped.
pub(crate) async fn apply_isolated(
    conn: &mut PgConnection,
    targets: &[(&'static dyn ReadModel, u64)],
    messages: &[Positioned],
) -> Result<Vec<(usize, Refusal)>, ProjectorError> {
    let mut refused = Vec::new();
    let mut parts = VecDeque::new();
    parts.push_back(0..messages.len());
    // Halves go back to the front, first half first, so messages are applied in log order.
    while let Some(part) = parts.pop_front() {
        if part.is_empty() {
            continue;
        }
        let Err(refusal) = apply_part(conn, targets, &messages[part.clone()]).await? else {
            continue;
        };
        if part.len() == 1 {
            refused.push((part.start, refusal));
        } else {
            tracing::debug!(
                messages = part.len(),
                error = %refusal.error,
                "PostgreSQL refused part of a chunk; applying it in halves"
            );
            let middle = part.start + part.len() / 2;
            parts.push_front(middle..part.end);
            parts.push_front(part.start..middle);
        }
    }
    Ok(refused)
}

/// Applies `messages` to every target under one savepoint: `Ok(Err(_))` when PostgreSQL
/// refused the data (the savepoint is rolled back and the transaction stays usable).
async fn apply_part(
    conn: &mut PgConnection,
    targets: &[(&'static dyn ReadModel, u64)],
    messages: &[Positioned],
) -> Result<Result<(), Refusal>, ProjectorError> {
    let mut savepoint = conn.begin().await?;
    for &(model, checkpoint) in targets {
        let pending: Vec<&Positioned> = messages
            .iter()
            .filter(|m| m.stream_sequence > checkpoint)
            .collect();
        if pending.is_empty() {
            continue;
        }
        match model.apply(&mut savepoint, &pending).await {
            Ok(rows) => tracing::debug!(projection = model.name(), rows, "applied"),
            Err(error) if refuses_data(&error) => {
                savepoint.rollback().await?;
                return Ok(Err(Refusal { model, error }));
            }
            Err(error) => return Err(error.into()),
        }
    }
    savepoint.commit().await?;
    Ok(Ok(()))
}
