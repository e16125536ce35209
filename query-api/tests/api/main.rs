//! Integration tests of query-api: each test runs the app on a random port against its own
//! nats-server and database.

mod account_lists;
mod account_players;
mod activity_stream;
mod admin_accounts;
mod banned_alts;
mod browser;
mod dashboard_pages;
mod dashboard_queries;
mod edge;
mod errors;
mod events;
mod events_pages;
mod funnel_extras;
mod funnels;
mod hardening;
mod helpers;
mod histories;
mod key_sync;
mod keys;
mod openapi;
mod overview_queries;
mod players;
mod pool_safety;
mod public;
mod rate_limits;
mod read_models;
mod read_replica;
mod retention;
mod roster;
mod route_families;
mod sign_in;
mod storable_input;
mod stream_lifetime;
mod team_invites;
mod team_pages;
