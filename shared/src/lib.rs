//! Warden's shared vocabulary: domain types with validation, the versioned event envelope,
//! the subject scheme, key handling, problem details and telemetry set-up.
//!
//! Nothing here opens a connection, spawns a task or reads a file: the services own their
//! connections. The one piece that calls out is the rate limiter, and only through the KV
//! bucket handle a service passes in, because ingest and query-api must count against the
//! same windows.

pub mod config;
pub mod envelope;
pub mod event_log;
pub mod event_name;
pub mod health;
pub mod keys;
pub mod problem;
pub mod rate_limit;
pub mod records;
pub mod shutdown;
pub mod subjects;
pub mod telemetry;
pub mod timeline;
pub mod validation;
