//! What a rebuild's bulk load keeps from one chunk to the next ([`BulkState`]): the rows a
//! fold would otherwise read back from the copy at the start of every chunk.
//!
//! Only the rebuild writes its copy, so what a fold wrote and committed there is what it
//! would read back, and it can keep it instead. The players fold is the load's slowest model
//! on the benchmark's rebuild (a million records, about four chunks), and its `SELECT` of the
//! ~93,000 players each chunk names took 1.3-4.4 s of the chunk's 4.6-12.9 s there. Kept, the
//! chunk's upsert reads those rows itself (part of what the `SELECT` cost moves there): the
//! fold's chunks after the first take 0.81 x the time (`cargo bench -p projector --bench
//! players_kept`, alone on the machine). Beside the other models, on the benchmark's rebuild,
//! the load's time did not change beyond its run-to-run spread (33-42 s).

use super::players;

/// The state a rebuild's bulk load keeps across chunks, shared by every partition (their
/// accounts, so their rows, are disjoint). One per rebuild, dropped with it.
///
/// Valid while every bulk apply that changed it is committed: a caller that rolls back a
/// bulk apply that succeeded (a savepoint of several models, one of which was refused) calls
/// [`forget`](BulkState::forget) first, or drops the state (a rebuild that fails throws its
/// copy away with it). A fold's apply that fails puts back what it took out, as it was (the
/// statements' rollback left those rows as they were stored).
#[derive(Debug, Default)]
pub struct BulkState {
    pub(crate) players: players::Kept,
}

impl BulkState {
    /// Forgets everything kept: the folds read their rows back from the copy again.
    pub fn forget(&self) {
        self.players.forget();
    }

    /// How many rows it keeps, of every fold.
    pub fn rows(&self) -> usize {
        self.players.len()
    }
}
