//! Whole-pipeline tests: a plugin write travels through ingest, JetStream and the projector
//! into PostgreSQL, and comes back out of query-api.

mod chat;
mod dashboard;
mod events_page;
mod events_stream;
mod flags;
mod isolation;
mod players;
mod punishments;
mod servers;
mod sessions;
mod staff;
mod timeline;
