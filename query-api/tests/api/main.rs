//! Integration tests of query-api: each test runs the app on a random port against its own
//! nats-server and database.

mod admin_accounts;
mod errors;
mod events;
mod funnels;
mod helpers;
mod histories;
mod keys;
mod openapi;
mod players;
mod public;
mod rate_limits;
mod read_models;
mod read_replica;
mod roster;
