//! Ingest: validates plugin writes and appends them to the JetStream event log.
//!
//! A request is answered only after JetStream has acknowledged every log message holding its
//! records (concurrent requests for one subject share them, see [`coalesce`]), so a 2xx means
//! the records are durable. Ingest never touches PostgreSQL: it authenticates
//! against the key directory (filled from the key bucket in JetStream KV) and keeps taking
//! writes while the database is down.

pub mod auth;
pub mod body;
pub mod coalesce;
pub mod config;
pub mod decode;
pub mod error;
pub mod routes;
pub mod startup;
pub mod state;
pub mod write;

pub use config::Config;
pub use startup::{App, Ingest};
