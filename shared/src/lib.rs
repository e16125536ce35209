//! Warden's shared vocabulary: domain types with validation, the versioned event envelope,
//! the subject scheme, key handling, problem details and telemetry set-up.
//!
//! Nothing here opens a connection or reads a file: the services own their connections.
//! A little runtime glue lives here because every service needs the same one, and it runs only
//! on handles the service passes in: the rate limiter (through the KV bucket handle, because
//! ingest and query-api must count against the same windows), the hardened HTTP server
//! ([`serve`], on the listener the service bound), the key-usage recorder ([`key_usage`],
//! publishing on the NATS client the service connected), the key directory's bucket watch
//! ([`key_directory`], on the bucket handle), and the route-family gate ([`gate`]) every
//! request passes.
//!
//! "contract §N" in comments throughout the workspace cites a section of the API contract,
//! `shared/docs/api-contract.md`.

pub mod config;
pub mod envelope;
pub mod event_log;
pub mod event_name;
pub mod gate;
pub mod health;
pub mod key_directory;
pub mod key_usage;
pub mod keys;
pub mod openapi;
pub mod problem;
pub mod rate_limit;
pub mod records;
pub mod serve;
pub mod shutdown;
pub mod subjects;
pub mod telemetry;
pub mod timeline;
pub mod validation;
