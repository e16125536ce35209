//! What every handler can reach.

use crate::key_store::KeyStore;
use axum::extract::FromRef;
use shared::keys::KeyDirectory;
use sqlx::PgPool;
use std::sync::Arc;

/// Shared handles: the database, the key directory and the key store.
#[derive(Clone, Debug)]
pub struct AppState {
    /// The read models and the admin tables.
    pub pool: PgPool,
    /// Live keys, filled from the key bucket.
    pub keys: Arc<KeyDirectory>,
    /// Accounts and keys (PostgreSQL + bucket).
    pub key_store: KeyStore,
}

impl FromRef<AppState> for Arc<KeyDirectory> {
    fn from_ref(state: &AppState) -> Self {
        state.keys.clone()
    }
}
