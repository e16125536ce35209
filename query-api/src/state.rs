//! What every handler can reach.

use crate::fanout::LiveEvents;
use crate::key_store::KeyStore;
use axum::extract::FromRef;
use shared::keys::KeyDirectory;
use sqlx::PgPool;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Shared handles: the database, the key directory and store, the live event feed.
#[derive(Clone, Debug)]
pub struct AppState {
    /// The read models and the admin tables.
    pub pool: PgPool,
    /// Live keys, filled from the key bucket.
    pub keys: Arc<KeyDirectory>,
    /// Accounts and keys (PostgreSQL + bucket).
    pub key_store: KeyStore,
    /// The live feed of the event log, for SSE subscribers.
    pub live: LiveEvents,
    /// Cancelled at shutdown: ends every open stream.
    pub shutdown: CancellationToken,
}

impl FromRef<AppState> for Arc<KeyDirectory> {
    fn from_ref(state: &AppState) -> Self {
        state.keys.clone()
    }
}
