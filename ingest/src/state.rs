//! What every ingest request handler shares.

use crate::coalesce::Coalescer;
use async_nats::jetstream;
use shared::key_directory::KeyDirectory;
use shared::key_usage::KeyUsage;
use shared::privacy::Keyring;
use shared::publisher::Publisher;
use shared::rate_limit::Limiter;
use shared::records::IpHasher;
use shared::subjects::Subjects;
use std::sync::Arc;

/// Shared, cheaply cloned handler state.
#[derive(Clone)]
pub struct AppState {
    /// Live API keys.
    pub keys: Arc<KeyDirectory>,
    /// Appends log messages and waits for their acks.
    pub publisher: Publisher,
    /// Appends a write's log messages through `publisher`, merged with concurrent writes'.
    pub coalescer: Coalescer,
    /// Reads the log (the action feed).
    pub jetstream: jetstream::Context,
    /// The event stream's name.
    pub stream: String,
    /// The log's subject scheme.
    pub subjects: Subjects,
    /// Seals personal fields before they reach the log.
    pub keyring: Keyring,
    /// Hashes player IPs before they reach the log, with a key of their account
    /// ([`IpHasher::for_account`]).
    pub ip_hasher: IpHasher,
    /// The plugin quota, shared across replicas.
    pub limiter: Arc<Limiter>,
    /// When each plugin key was last used, reported to query-api periodically.
    pub key_usage: Arc<KeyUsage>,
    /// `DASHBOARD_URL`: the base of appeal links (unset: the request's own scheme and host).
    pub dashboard_url: Option<Arc<str>>,
}
