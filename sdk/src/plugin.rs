//! Typed writes to the plugin API with a plugin key.

use crate::error::{SdkError, WriteReport};
use crate::records::{CustomEvent, PluginRecord};
use crate::transport::{RetryPolicy, Transport};
use chrono::{DateTime, Utc};
use reqwest::Method;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Records in one batch at most (contract §1).
pub const MAX_BATCH: usize = 1000;

/// The answer to a single custom event (`202 {"id","name","occurred_at","received_at"}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventAccepted {
    /// The event's id.
    pub id: Uuid,
    /// The event's name.
    pub name: String,
    /// When it happened.
    pub occurred_at: DateTime<Utc>,
    /// When the service received it.
    pub received_at: DateTime<Utc>,
}

/// Writes records to the plugin API; cheap to clone (one connection pool).
#[derive(Debug, Clone)]
pub struct PluginClient {
    transport: Transport,
}

impl PluginClient {
    /// A client for the service at `base_url` (e.g. `https://warden.example.com`), with a
    /// plugin key (`wdn_plugin_…`).
    pub fn new(base_url: &str, plugin_key: &str) -> Result<Self, SdkError> {
        let agent = concat!("warden-sdk/", env!("CARGO_PKG_VERSION"));
        Ok(PluginClient {
            transport: Transport::new(base_url, plugin_key, agent)?,
        })
    }

    /// The same client with another retry policy.
    pub fn with_retry_policy(mut self, policy: RetryPolicy) -> Self {
        self.transport.policy = policy;
        self
    }

    /// Writes one record (any kind; the type picks the endpoint). Gives it a UUIDv7 `id` when
    /// it has none, and retries with that same id.
    pub async fn send<R: PluginRecord>(&self, record: R) -> Result<WriteReport, SdkError> {
        self.send_batch(vec![record]).await
    }

    /// Writes 1..=1,000 records of one kind as one batch. Every record without an `id` gets a
    /// UUIDv7 before the first attempt, and every retry resends exactly the same records, so
    /// nothing is stored twice. A batch where every record is refused is an
    /// [`SdkError::Api`] (422) whose problem lists each record's reasons.
    pub async fn send_batch<R: PluginRecord>(
        &self,
        mut records: Vec<R>,
    ) -> Result<WriteReport, SdkError> {
        if records.is_empty() || records.len() > MAX_BATCH {
            return Err(SdkError::BatchSize(records.len()));
        }
        for record in &mut records {
            record.ensure_id();
        }
        let body = serde_json::to_vec(&records).map_err(SdkError::Decode)?;
        let answer = self
            .transport
            .call(Method::POST, self.transport.url(R::PATH), Some(body))
            .await?;
        let mut report: WriteReport =
            serde_json::from_slice(&answer.body).map_err(SdkError::Decode)?;
        report.retries = answer.retries;
        Ok(report)
    }

    /// Writes one custom event and returns the service's answer for it (its id and times).
    pub async fn send_event(&self, mut event: CustomEvent) -> Result<EventAccepted, SdkError> {
        event.ensure_id();
        let body = serde_json::to_vec(&event).map_err(SdkError::Decode)?;
        let answer = self
            .transport
            .call(
                Method::POST,
                self.transport.url(CustomEvent::PATH),
                Some(body),
            )
            .await?;
        serde_json::from_slice(&answer.body).map_err(SdkError::Decode)
    }
}
