//! Whole-pipeline tests: a plugin write travels through ingest, JetStream and the projector
//! into PostgreSQL, and comes back out of query-api.

mod alerts;
mod alerts_page;
mod alts;
mod anticheat_page;
mod browser;
mod chat;
mod chat_export;
mod chat_page;
mod dashboard;
mod dashboard_pages;
mod demo_history;
mod events_page;
mod events_stream;
mod faults;
mod flags;
mod funnels_page;
mod hostile;
mod investigate_page;
mod isolation;
mod keys;
mod notes;
mod player_search;
mod players;
mod players_page;
mod punishments;
mod punishments_page;
mod retention;
mod retention_page;
mod sdk;
mod servers;
mod sessions;
mod staff;
mod timeline;
mod trends;
mod trends_page;
