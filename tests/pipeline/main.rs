//! Whole-pipeline tests: a plugin write travels through ingest, JetStream and the projector
//! into PostgreSQL, and comes back out of query-api.

mod chat;
mod dashboard;
mod dashboard_pages;
mod events_page;
mod events_stream;
mod faults;
mod flags;
mod hostile;
mod isolation;
mod keys;
mod players;
mod punishments;
mod sdk;
mod servers;
mod sessions;
mod staff;
mod timeline;
