//! Where each partition ends in the stream, and moving the checkpoints of an idle partition
//! up to the stream's end.
//!
//! A partition's checkpoints move only with its own messages. One whose accounts are quiet
//! would keep an old checkpoint while the others move on, and "every checkpoint at the
//! stream's end" (how operators, tests and the benchmark tell the read models are caught up)
//! would never hold. So a partition holding every message of its own moves its checkpoints to
//! the stream's last sequence, which is safe by the order of the reads in [`advance_idle`].

use crate::checkpoint::{self, Partition};
use crate::error::ProjectorError;
use async_nats::jetstream::stream::{LastRawMessageErrorKind, Stream};
use shared::subjects::Subjects;
use sqlx::PgPool;
use tokio::sync::Semaphore;

/// The last stream sequence of a message matching `filter` (0 when none does).
async fn last_matching(stream: &Stream, filter: &str) -> Result<u64, ProjectorError> {
    match stream.get_last_raw_message_by_subject(filter).await {
        Ok(message) => Ok(message.sequence),
        Err(error) if error.kind() == LastRawMessageErrorKind::NoMessageFound => Ok(0),
        Err(error) => Err(ProjectorError::event_log(error)),
    }
}

/// The last stream sequence a reader of `partition` is delivered (0 when none): its own
/// subjects and the legacy ones.
pub(crate) async fn last_of(
    stream: &Stream,
    subjects: &Subjects,
    partition: Partition,
) -> Result<u64, ProjectorError> {
    let mut last = 0;
    for filter in subjects.partition_events(partition) {
        last = last.max(last_matching(stream, &filter).await?);
    }
    Ok(last)
}

/// Moves the checkpoints of `names` in `partition` to `end`, the stream's last sequence (read
/// by the caller before this is called), when every one of them already covers the partition's
/// last message; returns whether they now stand at `end` or past it.
///
/// The stream's end is read before the partition's last message: any message of the partition
/// at or before that end is stored by then, so the second read sees it. When the checkpoints
/// cover what the second read found, no message of the partition lies between them and the
/// end. The move happens under the checkpoint rows' locks, like every model's transaction.
pub(crate) async fn advance_idle(
    pool: &PgPool,
    stream: &Stream,
    subjects: &Subjects,
    partition: Partition,
    names: &[&str],
    end: u64,
    slots: &Semaphore,
) -> Result<bool, ProjectorError> {
    // Unlocked first: a busy partition (the usual case under load) never takes the locks here.
    let lowest = checkpoint::resume_after(pool, names, partition).await?;
    if lowest >= end {
        return Ok(true);
    }
    let own_last = last_of(stream, subjects, partition).await?;
    if lowest < own_last {
        return Ok(false);
    }
    // One of the process's transaction slots, so this never starves the pool.
    let _slot = slots.acquire().await.ok();
    let mut tx = pool.begin().await?;
    let locked = checkpoint::lock(&mut tx, names, partition).await?;
    if locked.iter().any(|checkpoint| *checkpoint < own_last) {
        return Ok(false);
    }
    checkpoint::advance(&mut tx, names, partition, end).await?;
    tx.commit().await?;
    Ok(true)
}

/// The stream's last sequence, as the server reports it now.
pub(crate) async fn stream_end(stream: &Stream) -> Result<u64, ProjectorError> {
    Ok(stream
        .get_info()
        .await
        .map_err(ProjectorError::event_log)?
        .state
        .last_sequence)
}
