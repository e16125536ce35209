//! A simulated fleet of game servers that writes to Warden's public plugin API.
//!
//! It gives a newcomer a living dashboard (servers with players, chat, punishments, custom
//! events) and, with `--servers`, `--players` and `--speed`, it is the load generator for
//! benchmarks. It talks only HTTP with a plugin key, exactly like the real plugin, through the
//! Warden SDK (`warden-sdk`).

pub mod activity;
pub mod config;
pub mod fleet;
pub mod history;
pub mod names;
pub mod records;
pub mod send;
pub mod stats;
pub mod world;

pub use config::Config;
pub use fleet::run;
