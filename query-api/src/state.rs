//! What every handler can reach.

use crate::fanout::LiveEvents;
use crate::key_store::KeyStore;
use crate::open_streams::OpenStreams;
use shared::key_directory::KeyDirectory;
use shared::key_usage::KeyUsage;
use shared::rate_limit::{Limiter, TrustedProxy};
use sqlx::PgPool;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Shared handles: the database, the key directory and store, the live event feed.
#[derive(Clone, Debug)]
pub struct AppState {
    /// The read models and the admin tables (the primary: admin writes go here).
    pub pool: PgPool,
    /// Where dashboard reads go: a PostgreSQL replica when `READ_DATABASE_URL` is set, else
    /// the same pool as `pool`.
    pub reads: PgPool,
    /// Live keys, filled from the key bucket.
    pub keys: Arc<KeyDirectory>,
    /// Accounts and keys (PostgreSQL + bucket).
    pub key_store: KeyStore,
    /// The live feed of the event log, for SSE subscribers.
    pub live: LiveEvents,
    /// Cancelled at shutdown: ends every open stream.
    pub shutdown: CancellationToken,
    /// The dashboard and public quotas, shared across replicas.
    pub limiter: Arc<Limiter>,
    /// Proxies whose `X-Forwarded-For` names the public client.
    pub trusted_proxies: Arc<[TrustedProxy]>,
    /// When each dashboard key was last used, reported periodically.
    pub key_usage: Arc<KeyUsage>,
    /// How many slices of the player id space one funnel reads at once (each on its own
    /// connection).
    pub funnel_parallelism: usize,
    /// How long a chat keyword search over the whole account reads before it answers with
    /// what it found (`CHAT_SEARCH_BUDGET_MS`).
    pub chat_search_budget: std::time::Duration,
    /// The live streams each key holds, capped, and ended when their key ends.
    pub streams: Arc<OpenStreams>,
    /// How staff dashboard sessions live and how their cookie is sent.
    pub sessions: crate::team::sessions::SessionPolicy,
    /// Hashes client IPs for the audit log (never stored in clear).
    pub ip_hasher: Arc<shared::records::IpHasher>,
    /// Appends the records the dashboard writes (staff notes) to the event log, waiting for
    /// the stream's ack.
    pub publisher: shared::publisher::Publisher,
    /// The event log's subjects (where a note is published).
    pub subjects: shared::subjects::Subjects,
    /// Webhook secrets' sealing key and the addresses destinations may reach.
    pub alerts: Arc<shared::alerts::AlertsConfig>,
    /// Seals and opens personal fields; destroys a player's key on erasure.
    pub keyring: shared::privacy::Keyring,
    /// What the "Connect a server" page offers (base URL, plugin jar).
    pub plugin: Arc<crate::config::PluginSetup>,
}
