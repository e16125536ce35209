//! Warden's shared vocabulary: domain types with validation, the versioned event envelope,
//! the subject scheme, key handling, problem details and telemetry set-up.
//!
//! Nothing here does I/O; the services own their connections.

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
