//! The notifier (`projector notify`): alert rules evaluated against the event log,
//! and the notifications they make delivered to webhooks and Discord.
//!
//! The evaluator is a consumer of the log with its own checkpoint (`notifier_checkpoints`) and
//! leader lock: per chunk, one transaction evaluates the rules of the chunk's accounts
//! ([`rules`]), writes one outbox row per notification and destination (`alert_deliveries`,
//! [`outbox`]) with the rules' state, moves the checkpoint and wakes the workers. A read-model
//! rebuild never touches these tables, so it never sends anything again; a restart resumes at
//! the checkpoint, so nothing is missed or sent twice; the very first start begins at the end
//! of the log, and a rule only matches what was received after it was created. The clock's
//! rules (a silent server, a long spell of low TPS) run in [`sweep`], only while caught up.
//! The [`delivery`] workers send the outbox with retries.

mod anticheat;
pub mod config;
pub mod delivery;
mod evaluate;
mod notifier;
mod outbox;
mod records;
mod rules;
mod servers;
mod sweep;

pub use config::NotifierConfig;
pub use notifier::{Notifier, NotifierApp};
