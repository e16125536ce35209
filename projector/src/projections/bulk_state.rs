//! What a rebuild's bulk load keeps from one chunk to the next ([`BulkState`]): the rows a
//! fold would otherwise read back from the copy at the start of every chunk, and, while the
//! load defers them, the rows and spans it writes once at its end.
//!
//! Only the rebuild writes its copy, so what a fold wrote and committed there is what it
//! would read back, and it can keep it instead. The players fold was the load's slowest model
//! on the benchmark's rebuild (a million records): each chunk names most players, and its
//! statements read, then rewrote, most `players` rows and their `player_names` spans at every
//! chunk. Kept, the rows are not read back; deferred ([`BulkState::defer_writes`]), each row
//! and span is written once, by [`BulkState::write_kept`] at the load's end.

use super::{ReadModel, players};
use sqlx::PgConnection;

/// The state a rebuild's bulk load keeps across chunks, shared by every partition (their
/// accounts, so their rows, are disjoint). One per rebuild, dropped with it.
///
/// Valid while every bulk apply that changed it is committed: a caller that rolls back a
/// bulk apply that succeeded (a savepoint of several models, one of which was refused) calls
/// [`forget`](BulkState::forget) first, or drops the state (a rebuild that fails throws its
/// copy away with it). A fold's apply that fails puts back what it took out, as it was (the
/// statements' rollback left those rows as they were stored). Rows left to write and then
/// forgotten are lost: [`write_kept`](BulkState::write_kept) then fails.
#[derive(Debug, Default)]
pub struct BulkState {
    pub(crate) players: players::Kept,
}

impl BulkState {
    /// Keeps the rows of at most `players` players (`PROJECTOR_REBUILD_KEPT_PLAYERS`), and
    /// their name spans while fewer than twice as many are kept.
    pub fn with_kept_players(players: usize) -> Self {
        BulkState {
            players: players::Kept::with_most(players),
        }
    }

    /// The most players rows, and the most name spans, kept at once so far.
    pub fn peaks(&self) -> (usize, usize) {
        self.players.peaks()
    }

    /// From now on the folds that can leave their writes for the end of the load do so, until
    /// [`write_kept`](BulkState::write_kept): the copy's tables of those models
    /// ([`defers`](BulkState::defers)) miss rows meanwhile.
    pub fn defer_writes(&self) {
        self.players.defer();
    }

    /// Whether `model`'s tables miss rows kept to write later.
    pub fn defers(&self, model: &str) -> bool {
        model == players::Players.name() && self.players.deferring()
    }

    /// Writes what the folds left to write, in the caller's transaction (the copy's
    /// search path), and tells how much: the players rows and name spans. Once that
    /// transaction committed, [`kept_written`](BulkState::kept_written); the folds write at
    /// once from then on. Fails when rows left to write were forgotten: the copy is then
    /// incomplete, and must be thrown away.
    pub async fn write_kept(&self, conn: &mut PgConnection) -> anyhow::Result<(usize, usize)> {
        players::write_kept(conn, &self.players).await
    }

    /// What [`write_kept`](BulkState::write_kept) wrote has committed.
    pub fn kept_written(&self) {
        players::kept_written(&self.players);
    }

    /// Forgets everything kept: the folds read their rows back from the copy again.
    pub fn forget(&self) {
        self.players.forget();
    }

    /// How many rows it keeps, of every fold.
    pub fn rows(&self) -> usize {
        self.players.len()
    }

    /// How many rows and spans it keeps to write at the load's end.
    pub fn unwritten(&self) -> usize {
        self.players.unwritten()
    }
}
