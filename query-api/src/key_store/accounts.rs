//! Accounts: the customers keys belong to.

use super::{KeyStore, KeyStoreError};
use chrono::{DateTime, Utc};
use serde::Serialize;
use shared::validation::FieldErrors;
use utoipa::ToSchema;
use uuid::Uuid;

/// A customer: one game-server network.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ToSchema)]
pub struct Account {
    /// The account's id (UUIDv7).
    pub id: Uuid,
    /// Display name.
    pub name: String,
    /// When it was created.
    pub created_at: DateTime<Utc>,
}

/// Checks an account name (1..=200 characters).
pub fn check_account_name(name: &str) -> Result<(), KeyStoreError> {
    let mut errors = FieldErrors::new();
    errors.text("name", Some(name.trim()), 1, 200);
    errors.into_result().map_err(KeyStoreError::Rejected)
}

impl KeyStore {
    /// Creates an account.
    pub async fn create_account(&self, name: &str) -> Result<Account, KeyStoreError> {
        check_account_name(name)?;
        let account = sqlx::query_as::<_, Account>(
            "INSERT INTO accounts (id, name) VALUES ($1, $2) RETURNING id, name, created_at",
        )
        .bind(Uuid::now_v7())
        .bind(name.trim())
        .fetch_one(&self.pool)
        .await?;
        Ok(account)
    }

    /// Every account, oldest first.
    pub async fn list_accounts(&self) -> Result<Vec<Account>, KeyStoreError> {
        let accounts = sqlx::query_as::<_, Account>(
            "SELECT id, name, created_at FROM accounts ORDER BY created_at, id",
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(accounts)
    }

    /// Fails with [`KeyStoreError::AccountNotFound`] unless the account exists.
    pub async fn require_account(&self, id: Uuid) -> Result<(), KeyStoreError> {
        let exists: bool =
            sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM accounts WHERE id = $1)")
                .bind(id)
                .fetch_one(&self.pool)
                .await?;
        exists
            .then_some(())
            .ok_or(KeyStoreError::AccountNotFound(id))
    }
}
