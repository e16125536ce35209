//! The read models, one module each, and the fold of one chunk of the log into all of them.
//!
//! Every read model has its own checkpoint and applies each chunk in its own transaction,
//! concurrently with the others ([`apply`]): a model only gets the messages past its own
//! checkpoint, so a model added later replays the log from the start while the others skip
//! what they already hold.
//!
//! Adding a read model: a module here with a unit struct and one [`read_model!`] line (its
//! checkpoint name, its tables, its fold), its migration, and one line in [`READ_MODELS`]. The
//! checkpoints, the consumer, `rebuild --model`, the parked retry and the tests that compare
//! read models all take their models and tables from that list; `tests/projector/registry.rs`
//! fails while a table of the schema belongs to no registered model.

/// Implements [`ReadModel`] for a module's unit struct: its checkpoint name, the tables it
/// owns, and the module's `async fn(&mut PgConnection, &[&Positioned]) -> Result<u64, _>` fold:
/// `read_model! { Chat: "chat", tables: ["chat_messages"], fold: apply }`, with
/// `load_indexes: [...]` before `fold` when it has [some](ReadModel::load_indexes), and
/// `bulk: path` after it when it has a [bulk load](ReadModel::apply_bulk) (or
/// `bulk_keeping: path`, a bulk load that also takes the [`BulkState`]). A model
/// with [dependencies](ReadModel::depends_on) writes its `impl ReadModel` by hand.
macro_rules! read_model {
    (
        $model:ident: $name:literal,
        tables: [$($table:literal),+ $(,)?],
        $(load_indexes: [$($index:literal),* $(,)?],)?
        fold: $fold:path
        $(, bulk: $bulk:path)?
        $(, bulk_keeping: $keeping:path)? $(,)?
    ) => {
        impl $crate::projections::ReadModel for $model {
            fn name(&self) -> &'static str {
                $name
            }

            fn tables(&self) -> &'static [&'static str] {
                &[$($table),+]
            }

            $(
                fn load_indexes(&self) -> &'static [&'static str] {
                    &[$($index),*]
                }
            )?

            fn apply<'a>(
                &'a self,
                conn: &'a mut ::sqlx::PgConnection,
                messages: &'a [&'a $crate::projections::Positioned],
            ) -> ::futures::future::BoxFuture<'a, Result<u64, ::sqlx::Error>> {
                Box::pin($fold(conn, messages))
            }

            $(
                fn apply_bulk<'a>(
                    &'a self,
                    conn: &'a mut ::sqlx::PgConnection,
                    messages: &'a [&'a $crate::projections::Positioned],
                    _state: &'a $crate::projections::BulkState,
                ) -> ::futures::future::BoxFuture<'a, Result<u64, ::sqlx::Error>> {
                    Box::pin($bulk(conn, messages))
                }
            )?

            $(
                fn apply_bulk<'a>(
                    &'a self,
                    conn: &'a mut ::sqlx::PgConnection,
                    messages: &'a [&'a $crate::projections::Positioned],
                    state: &'a $crate::projections::BulkState,
                ) -> ::futures::future::BoxFuture<'a, Result<u64, ::sqlx::Error>> {
                    Box::pin($keeping(conn, messages, state))
                }
            )?
        }
    };
}

pub mod action_deliveries;
pub mod active_days;
pub mod anticheat_flags;
pub mod appeals;
mod apply;
mod bulk;
mod bulk_state;
pub mod chat;
pub mod erasure;
pub mod notes;
pub mod players;
pub mod punishments;
mod recent_activity;
pub mod servers;
pub mod sessions;
pub mod timeline;

use bytes::Bytes;
use futures::future::BoxFuture;
use shared::envelope::LogMessage;
use sqlx::PgConnection;

pub(crate) use apply::{Applier, ChunkOutcome, ModelOutcome, Prepared, apply_isolated};
pub use bulk_state::BulkState;

/// Every read model this build maintains (a model comes after every model it
/// [depends on](ReadModel::depends_on), the order a parked retry applies them in). The only
/// list of them.
pub static READ_MODELS: &[&dyn ReadModel] = &[
    &timeline::Timeline,
    &players::Players,
    &servers::Servers,
    &sessions::Sessions,
    &punishments::Punishments,
    &anticheat_flags::AnticheatFlags,
    &chat::Chat,
    &notes::Notes,
    &action_deliveries::ActionDeliveries,
    &appeals::Appeals,
    &active_days::ActiveDays,
    // Last: it scrubs what the models before it stored of an erased player.
    &erasure::Erasure,
];

/// A read model fed from the event log: one module of [`projections`](self), registered once
/// in [`READ_MODELS`].
///
/// Object-safe (models are used as `&'static dyn ReadModel`), so `apply` returns a boxed
/// future; an implementation is `Box::pin(apply(conn, messages))` over the module's fold.
pub trait ReadModel: Send + Sync {
    /// Its row in `projection_checkpoints`, and its name for `rebuild --model`.
    fn name(&self) -> &'static str;

    /// The tables it writes, and no other model does: what a rebuild replaces.
    fn tables(&self) -> &'static [&'static str];

    /// The models (by [`name`](ReadModel::name)) whose tables its fold reads, so must have
    /// committed a chunk before it starts applying the same chunk. Only [`erasure::Erasure`] has any (it scrubs the others' tables);
    /// every other fold reads only its own tables and `public` ones no model writes
    /// (`account_settings`).
    fn depends_on(&self) -> &'static [&'static str] {
        &[]
    }

    /// The live names of the indexes (beyond its unique ones) its fold reads through, so a
    /// rebuild builds them before loading its copy instead of after (see
    /// [`crate::rebuild`]): without them each chunk's reads would scan whole tables.
    fn load_indexes(&self) -> &'static [&'static str] {
        &[]
    }

    /// Applies `messages` (all past this model's checkpoint, in log order) inside the caller's
    /// transaction; returns how many rows it wrote. Table names are unqualified, so the
    /// connection's `search_path` decides where they go (see [`crate::rebuild`]).
    fn apply<'a>(
        &'a self,
        conn: &'a mut PgConnection,
        messages: &'a [&'a Positioned],
    ) -> BoxFuture<'a, Result<u64, sqlx::Error>>;

    /// As [`apply`](ReadModel::apply), into a rebuild's copy, which only the rebuild writes: a
    /// model may store append-only rows with a binary `COPY` ([`bulk`]), falling back to its
    /// statements for messages whose `COPY` PostgreSQL refuses, so it ends with the same rows
    /// and refuses the same messages; or keep in `state` what it wrote, rather than read it
    /// back at the next chunk ([`BulkState`]). [`apply`](ReadModel::apply) unless the model
    /// has one.
    fn apply_bulk<'a>(
        &'a self,
        conn: &'a mut PgConnection,
        messages: &'a [&'a Positioned],
        state: &'a BulkState,
    ) -> BoxFuture<'a, Result<u64, sqlx::Error>> {
        let _ = state;
        self.apply(conn, messages)
    }
}

/// How a fold stores its rows: with its statements (the live projector, a parked retry), or in
/// bulk where that ends with the same rows (a rebuild's copy: [`ReadModel::apply_bulk`]).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) enum Load<'a> {
    /// [`ReadModel::apply`].
    #[default]
    Statements,
    /// [`ReadModel::apply_bulk`], with the state the rebuild keeps across its chunks.
    Bulk(&'a BulkState),
}

/// A model shows as its name (in logs, errors and test failures).
impl std::fmt::Debug for dyn ReadModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Models are the same when their checkpoint names are (names are unique: see the tests).
impl PartialEq for dyn ReadModel {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

impl Eq for dyn ReadModel {}

/// The registered model named `name` (its checkpoint name, e.g. `players`).
pub fn by_name(name: &str) -> Option<&'static dyn ReadModel> {
    READ_MODELS
        .iter()
        .copied()
        .find(|model| model.name() == name)
}

/// Every table a registered read model writes, model by model in registry order.
pub fn tables() -> impl Iterator<Item = &'static str> {
    READ_MODELS.iter().flat_map(|model| model.tables()).copied()
}

/// `0..len` as consecutive ranges of at most `size` rows: one bounded UNNEST statement each.
pub(crate) fn statement_ranges(
    len: usize,
    size: usize,
) -> impl Iterator<Item = std::ops::Range<usize>> {
    let size = size.max(1);
    (0..len)
        .step_by(size)
        .map(move |start| start..(start + size).min(len))
}

/// The checkpoint names of every read model.
pub(crate) fn checkpoint_names() -> Vec<&'static str> {
    names_of(READ_MODELS)
}

/// The checkpoint names of `models`, in the same order.
pub(crate) fn names_of(models: &[&'static dyn ReadModel]) -> Vec<&'static str> {
    models.iter().map(|model| model.name()).collect()
}

/// A log message as delivered, before decoding.
#[derive(Debug, Clone)]
pub(crate) struct Delivered {
    /// Its stream sequence.
    pub(crate) stream_sequence: u64,
    /// Its subject.
    pub(crate) subject: String,
    /// Its bytes.
    pub(crate) payload: Bytes,
}

/// A decoded log message and where it sits in the stream.
#[derive(Debug, Clone)]
pub struct Positioned {
    /// Its stream sequence (the base of each record's timeline `seq`).
    pub stream_sequence: u64,
    /// The message.
    pub message: LogMessage,
}

#[cfg(test)]
mod erased_tests;
#[cfg(test)]
#[path = "fake_model_tests.rs"]
pub(crate) mod fake_model;
#[cfg(test)]
mod tests;
