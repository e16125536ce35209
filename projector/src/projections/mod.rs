//! The read models, one module each, and the fold of one chunk of the log into all of them.
//!
//! Every read model has its own checkpoint, and one transaction applies a chunk to all of them:
//! a model only gets the messages past its own checkpoint, so a model added later replays the
//! log from the start while the others skip what they already hold.

pub mod anticheat_flags;
pub mod chat;
mod chunk;
pub mod players;
pub mod punishments;
pub mod servers;
pub mod sessions;
pub mod timeline;

use bytes::Bytes;
use shared::envelope::LogMessage;

pub(crate) use chunk::{ChunkOutcome, apply_chunk, apply_isolated};

/// A read model fed from the event log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadModel {
    /// Custom and internal events, for listing, streaming and funnels ([`timeline`]).
    Timeline,
    /// Who each player is: names, first and last seen, rank, linked account ([`players`]).
    Players,
    /// Server status and TPS / player-count history from heartbeats ([`servers`]).
    Servers,
    /// Join/quit pairs per server, closed when a server goes offline ([`sessions`]).
    Sessions,
    /// Punishments issued, revoked and expiring ([`punishments`]).
    Punishments,
    /// Anti-cheat flags ([`anticheat_flags`]).
    AnticheatFlags,
    /// Chat messages and commands ([`chat`]).
    Chat,
}

impl ReadModel {
    /// Every read model this build maintains.
    pub const ALL: [ReadModel; 7] = [
        ReadModel::Timeline,
        ReadModel::Players,
        ReadModel::Servers,
        ReadModel::Sessions,
        ReadModel::Punishments,
        ReadModel::AnticheatFlags,
        ReadModel::Chat,
    ];

    /// Its row in `projection_checkpoints`.
    pub fn name(self) -> &'static str {
        match self {
            ReadModel::Timeline => "timeline",
            ReadModel::Players => "players",
            ReadModel::Servers => "servers",
            ReadModel::Sessions => "sessions",
            ReadModel::Punishments => "punishments",
            ReadModel::AnticheatFlags => "anticheat_flags",
            ReadModel::Chat => "chat",
        }
    }

    /// The tables it writes, and no other model does: what a rebuild replaces.
    pub fn tables(self) -> &'static [&'static str] {
        match self {
            ReadModel::Timeline => &["events"],
            ReadModel::Players => &["players"],
            ReadModel::Servers => &["servers", "server_samples", "server_minutes"],
            ReadModel::Sessions => &["sessions", "session_server_heartbeats"],
            ReadModel::Punishments => &["punishments", "punishment_revokes"],
            ReadModel::AnticheatFlags => &["anticheat_flags"],
            ReadModel::Chat => &["chat_messages"],
        }
    }

    /// The model named `name` (its checkpoint name, e.g. `players`).
    pub fn parse(name: &str) -> Option<ReadModel> {
        ReadModel::ALL
            .into_iter()
            .find(|model| model.name() == name)
    }

    /// Applies `messages` (all past this model's checkpoint) inside the chunk's transaction;
    /// returns how many rows it wrote.
    async fn apply(
        self,
        conn: &mut sqlx::PgConnection,
        messages: &[&Positioned],
    ) -> Result<u64, sqlx::Error> {
        match self {
            ReadModel::Timeline => timeline::apply(conn, messages).await,
            ReadModel::Players => players::apply(conn, messages).await,
            ReadModel::Servers => servers::apply(conn, messages).await,
            ReadModel::Sessions => sessions::apply(conn, messages).await,
            ReadModel::Punishments => punishments::apply(conn, messages).await,
            ReadModel::AnticheatFlags => anticheat_flags::apply(conn, messages).await,
            ReadModel::Chat => chat::apply(conn, messages).await,
        }
    }
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
    names_of(&ReadModel::ALL)
}

/// The checkpoint names of `models`, in the same order.
pub(crate) fn names_of(models: &[ReadModel]) -> Vec<&'static str> {
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
mod statement_ranges_tests {
    #[test]
    fn ranges_cover_every_row_once_in_bounded_steps() {
        let ranges: Vec<_> = super::statement_ranges(12, 5).collect();
        assert_eq!(ranges, [0..5, 5..10, 10..12]);
        assert_eq!(super::statement_ranges(0, 5).count(), 0);
        assert_eq!(super::statement_ranges(5, 5).next(), Some(0..5));
        assert_eq!(super::statement_ranges(5, 5).count(), 1);
    }
}
