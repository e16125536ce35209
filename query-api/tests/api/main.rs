//! Integration tests of query-api: each test runs the app on a random port against its own
//! nats-server and database.

mod admin_accounts;
mod errors;
mod events;
mod helpers;
mod keys;
mod openapi;
mod public;
