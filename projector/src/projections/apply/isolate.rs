//! Applying messages to a read model inside its transaction, with every message PostgreSQL
//! refuses isolated by bisection instead of failing the whole chunk.
//!
//! The messages are first applied whole under a savepoint: one batched statement per model,
//! the fast path. If PostgreSQL refuses the data ([`refuses_data`]: a NUL in text, a value out
//! of range, an index entry too large), the savepoint is rolled back and the messages are
//! split in halves, each applied under its own savepoint, down to the single messages refused.
//! One bad message among n costs about 2·log2(n) extra attempts, all in the same transaction,
//! so the checkpoint still moves exactly when the writes it covers commit. Anything else (an
//! outage) is an `Err`, and the caller's transaction must be dropped.

use crate::error::{ProjectorError, refusal_reason, refuses_data, sqlstate};
use crate::projections::{Load, Positioned, ReadModel};
use sqlx::{Connection, PgConnection};
use std::collections::VecDeque;

/// A message PostgreSQL refused: the read model whose statement failed, and how.
#[derive(Debug)]
pub(crate) struct Refusal {
    /// The read model whose statement was refused (it keeps nothing of the message).
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

/// Applies `messages` (in log order) to each `(model, checkpoint)` of `targets` past that
/// checkpoint, inside the caller's transaction, and returns the messages PostgreSQL refused
/// (by index, in order), none of whose writes are kept. With several targets, a refusal by
/// one sets the message aside for all of them; the projector passes one model at a time, so a
/// message one model refuses stays with the others. An outage is an `Err`: the caller's
/// transaction is then unusable and must be dropped.
pub(crate) async fn apply_isolated(
    conn: &mut PgConnection,
    targets: &[(&'static dyn ReadModel, u64)],
    messages: &[Positioned],
) -> Result<Vec<(usize, Refusal)>, ProjectorError> {
    let messages: Vec<&Positioned> = messages.iter().collect();
    apply_isolated_as(conn, targets, &messages, Load::Statements).await
}

/// [`apply_isolated`], the folds storing their rows as `load` says.
pub(crate) async fn apply_isolated_as(
    conn: &mut PgConnection,
    targets: &[(&'static dyn ReadModel, u64)],
    messages: &[&Positioned],
    load: Load<'_>,
) -> Result<Vec<(usize, Refusal)>, ProjectorError> {
    let mut refused = Vec::new();
    let mut parts = VecDeque::new();
    parts.push_back(0..messages.len());
    // Halves go back to the front, first half first, so messages are applied in log order.
    while let Some(part) = parts.pop_front() {
        if part.is_empty() {
            continue;
        }
        let Err(refusal) = apply_part(conn, targets, &messages[part.clone()], load).await? else {
            continue;
        };
        if part.len() == 1 {
            refused.push((part.start, refusal));
        } else {
            tracing::debug!(
                messages = part.len(),
                projection = refusal.model.name(),
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
    messages: &[&Positioned],
    load: Load<'_>,
) -> Result<Result<(), Refusal>, ProjectorError> {
    let mut savepoint = conn.begin().await?;
    // Whether a target before this one applied the part (in bulk, it may have kept rows).
    let mut applied_before = false;
    for &(model, checkpoint) in targets {
        let pending: Vec<&Positioned> = messages
            .iter()
            .copied()
            .filter(|m| m.stream_sequence > checkpoint)
            .collect();
        if pending.is_empty() {
            continue;
        }
        let applied = match load {
            Load::Statements => model.apply(&mut savepoint, &pending).await,
            Load::Bulk(state) => model.apply_bulk(&mut savepoint, &pending, state).await,
        };
        match applied {
            Ok(rows) => {
                applied_before = true;
                tracing::debug!(projection = model.name(), rows, "applied");
            }
            Err(error) if refuses_data(&error) => {
                // What the targets before it kept of the part is rolled back with it (the
                // refused one kept nothing).
                if applied_before && let Load::Bulk(state) = load {
                    state.forget();
                }
                savepoint.rollback().await?;
                return Ok(Err(Refusal { model, error }));
            }
            Err(error) => return Err(error.into()),
        }
    }
    savepoint.commit().await?;
    Ok(Ok(()))
}
