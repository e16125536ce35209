//! Writing one export: a task that reads each section with a `fetch` stream inside one
//! read-only REPEATABLE READ transaction (every section sees the same moment, so a chat line
//! and its timeline row agree) and hands the document to the response body in pieces of about
//! [`PIECE_BYTES`] through a channel of [`PIECES_IN_FLIGHT`].
//!
//! Memory holds one piece whatever the player's size: the channel is bounded, so a slow
//! download slows the reads (PostgreSQL waits on its socket) instead of piling rows up here.
//! The transaction holds one read connection for the download's length; a client that takes
//! nothing for [`STALL_LIMIT`], or the service shutting down, ends it. A failure half-way ends
//! the body with an error, so the client sees a broken download, never a short file that
//! parses as whole.

use super::rows::{self, ExportedPlayer};
use axum::body::{Body, Bytes};
use chrono::Utc;
use futures::TryStreamExt;
use serde::Serialize;
use sqlx::postgres::PgRow;
use sqlx::{FromRow, PgConnection, Postgres, Transaction};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;
use uuid::Uuid;

/// About how much of the document one piece of the body carries.
const PIECE_BYTES: usize = 64 * 1024;
/// Pieces written ahead of the client.
const PIECES_IN_FLIGHT: usize = 4;
/// How long the client may take nothing before the export is abandoned.
pub const STALL_LIMIT: Duration = Duration::from_secs(60);

/// What one export reads.
pub(super) struct Subject {
    /// The account.
    pub(super) account: Uuid,
    /// The player.
    pub(super) player: Uuid,
    /// The account's servers' offline-after seconds (for the playtime of open sessions).
    pub(super) offline_after_seconds: f64,
}

/// The body of an export of `subject` read in `tx`: starts the writer and returns at once.
pub(super) fn body(
    tx: Transaction<'static, Postgres>,
    subject: Subject,
    shutdown: CancellationToken,
) -> Body {
    let (sender, receiver) = mpsc::channel(PIECES_IN_FLIGHT);
    let mut sink = Sink {
        piece: Vec::with_capacity(PIECE_BYTES * 2),
        sender,
        shutdown,
    };
    // In the request's span, so a failure is logged with its route and caller.
    let task = async move {
        match write(tx, &subject, &mut sink).await {
            Ok(()) => {}
            Err(Ended::Client(why)) => tracing::debug!(why, "player export abandoned"),
            Err(Ended::Failed(error)) => {
                tracing::error!(error = %format!("{error:#}"), "player export failed");
                // Best effort: the client may be gone already.
                let broken = std::io::Error::other("the export failed");
                let _ = sink.sender.send(Err(broken)).await;
            }
        }
    };
    tokio::spawn(task.instrument(tracing::Span::current()));
    Body::from_stream(ReceiverStream::new(receiver))
}

/// Why a writer stopped early.
enum Ended {
    /// The client went away, stalled, or the service is stopping: nobody to tell.
    Client(&'static str),
    /// A query or a row failed.
    Failed(anyhow::Error),
}

impl From<sqlx::Error> for Ended {
    fn from(error: sqlx::Error) -> Self {
        Ended::Failed(error.into())
    }
}

impl From<serde_json::Error> for Ended {
    fn from(error: serde_json::Error) -> Self {
        Ended::Failed(error.into())
    }
}

/// The document, section by section, in the order of [`super::PlayerExport`]'s fields.
async fn write(
    mut tx: Transaction<'static, Postgres>,
    subject: &Subject,
    sink: &mut Sink,
) -> Result<(), Ended> {
    let conn: &mut PgConnection = &mut tx;
    sink.piece.push(b'{');
    sink.field("account_id", &subject.account)?;
    sink.piece.push(b',');
    sink.field("player_uuid", &subject.player)?;
    sink.piece.push(b',');
    sink.field("exported_at", &Utc::now())?;
    let player_sql = rows::player_sql();
    let player = sqlx::query_as::<_, ExportedPlayer>(&player_sql)
        .bind(subject.account)
        .bind(subject.player)
        .bind(subject.offline_after_seconds);
    sink.section(conn, "player", player).await?;
    let (a, p) = (subject.account, subject.player);
    macro_rules! section {
        ($name:literal, $row:ty, $sql:expr) => {
            let query = sqlx::query_as::<_, $row>($sql).bind(a).bind(p);
            sink.section(conn, $name, query).await?;
        };
    }
    section!("names", rows::ExportedName, rows::NAMES_SQL);
    section!("sessions", rows::ExportedSession, rows::SESSIONS_SQL);
    section!("chat", rows::ExportedChat, rows::CHAT_SQL);
    let received = rows::punishments_received_sql();
    section!("punishments_received", rows::ExportedPunishment, &received);
    let issued = rows::punishments_issued_sql();
    section!("punishments_issued", rows::ExportedPunishment, &issued);
    section!("revokes_issued", rows::ExportedRevoke, rows::REVOKES_SQL);
    section!("anticheat_flags", rows::ExportedFlag, rows::FLAGS_SQL);
    section!("notes", rows::ExportedNote, rows::NOTES_SQL);
    section!("account_links", rows::ExportedLink, rows::LINKS_SQL);
    let rank_changes = rows::rank_changes_sql();
    section!("rank_changes", rows::ExportedEvent, &rank_changes);
    let events = rows::events_sql();
    section!("events", rows::ExportedEvent, &events);
    section!("active_days", rows::ExportedDay, rows::ACTIVE_DAYS_SQL);
    section!("event_days", rows::ExportedEventDay, rows::EVENT_DAYS_SQL);
    section!("erasure", rows::ExportedErasure, rows::ERASURE_SQL);
    sink.piece.push(b'}');
    sink.flush().await?;
    // Read-only: nothing to keep; ending it returns the connection at once.
    tx.rollback().await?;
    Ok(())
}

/// The piece being written and where it goes.
struct Sink {
    piece: Vec<u8>,
    sender: mpsc::Sender<Result<Bytes, std::io::Error>>,
    shutdown: CancellationToken,
}

impl Sink {
    /// `"name":value`.
    fn field(&mut self, name: &str, value: &impl Serialize) -> Result<(), Ended> {
        serde_json::to_writer(&mut self.piece, name)?;
        self.piece.push(b':');
        serde_json::to_writer(&mut self.piece, value)?;
        Ok(())
    }

    /// `,"name":[rows...]`, the rows written as `query` yields them.
    async fn section<'q, T>(
        &mut self,
        conn: &mut PgConnection,
        name: &str,
        query: sqlx::query::QueryAs<'q, Postgres, T, sqlx::postgres::PgArguments>,
    ) -> Result<(), Ended>
    where
        T: for<'r> FromRow<'r, PgRow> + Serialize + Send + Unpin,
    {
        self.piece.push(b',');
        serde_json::to_writer(&mut self.piece, name)?;
        self.piece.extend_from_slice(b":[");
        let mut rows = query.fetch(&mut *conn);
        let mut first = true;
        while let Some(row) = rows.try_next().await? {
            if !first {
                self.piece.push(b',');
            }
            first = false;
            serde_json::to_writer(&mut self.piece, &row)?;
            if self.piece.len() >= PIECE_BYTES {
                self.flush().await?;
            }
        }
        self.piece.push(b']');
        Ok(())
    }

    /// Hands the piece to the body, waiting (at most [`STALL_LIMIT`]) while the client is
    /// [`PIECES_IN_FLIGHT`] pieces behind.
    async fn flush(&mut self) -> Result<(), Ended> {
        let piece = Bytes::from(std::mem::replace(
            &mut self.piece,
            Vec::with_capacity(PIECE_BYTES * 2),
        ));
        tokio::select! {
            sent = tokio::time::timeout(STALL_LIMIT, self.sender.send(Ok(piece))) => match sent {
                Ok(Ok(())) => Ok(()),
                Ok(Err(_)) => Err(Ended::Client("the client went away")),
                Err(_) => Err(Ended::Client("the client stopped reading")),
            },
            () = self.shutdown.cancelled() => Err(Ended::Client("the service is stopping")),
        }
    }
}
