//! The projector: folds the event log (NATS JetStream) into PostgreSQL read models, exactly once.
//!
//! PostgreSQL is the truth about progress: each read model applies each chunk of log messages
//! in its own transaction together with its checkpoint (the models concurrently), and
//! consumption always resumes from the lowest checkpoint, each model skipping what it holds,
//! so a crash, a broker outage or a replay never applies a message twice or skips one. Each read model (the event timeline, players, servers, sessions, punishments,
//! anti-cheat flags, chat) is one module of [`projections`] with its own tables and checkpoint.

pub mod alerts;
mod checkpoint;
pub mod config;
mod consumer;
pub mod error;
mod lag;
mod leadership;
pub mod parked;
mod partitions;
pub mod projections;
pub mod read_ahead;
pub mod rebuild;
pub mod retention;
pub mod startup;

pub use config::Config;
pub use startup::{App, Projector, migrate};

/// The projector's schema migrations (`projector/migrations`); the projector applies them and
/// readers never do.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!();
