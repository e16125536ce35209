//! Warden's shared vocabulary: domain types with validation, the versioned event envelope,
//! the subject scheme, key handling, problem details and telemetry set-up.
//!
//! It also holds the machinery every service needs the same way, written once: opening NATS,
//! its buckets and the event stream ([`nats`]), typed secrets that never print ([`secret`]),
//! readiness probes with timeouts ([`health`]), one shutdown deadline ([`shutdown`]), the rate
//! limiter (ingest and query-api count against the same windows), the hardened HTTP server
//! ([`serve`]), the key-usage recorder ([`key_usage`]), the key directory's bucket watch
//! ([`key_directory`]), and the route-family gate ([`gate`]) every request passes.
//!
//! "contract §N" in comments throughout the workspace cites a section of the API contract,
//! `shared/docs/api-contract.md`.

pub mod alerts;
pub mod appeal_link;
pub mod base_url;
pub mod config;
pub mod date_time;
pub mod envelope;
pub mod event_log;
pub mod event_name;
pub mod gate;
pub mod health;
pub mod key_directory;
pub mod key_usage;
pub mod keys;
pub mod nats;
pub mod openapi;
pub mod privacy;
pub mod problem;
pub mod publisher;
pub mod rate_limit;
pub mod records;
pub mod secret;
pub mod serve;
pub mod shutdown;
pub mod subjects;
pub mod telemetry;
pub mod timeline;
pub mod validation;
pub mod whole_number;
