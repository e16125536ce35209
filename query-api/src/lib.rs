//! query-api: the dashboard, events and public reads, and the admin API (accounts, keys,
//! settings, reviews, exchange rates), with the OpenAPI document of the whole base URL.

pub mod auth;
pub mod cli;
pub mod config;
pub mod error;
pub mod extract;
pub mod fanout;
pub mod funnel;
pub mod key_store;
pub mod open_streams;
pub mod pages;
pub mod queries;
pub mod routes;
pub mod startup;
pub mod state;
pub mod team;

pub use config::Config;
pub use startup::{App, QueryApi};
