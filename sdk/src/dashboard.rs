//! Typed reads with a dashboard key (contract §7 and §8).
//!
//! Dashboard keys are limited to 60 requests a minute; a 429 is waited out (its `Retry-After`)
//! and retried within the client's retry policy.

use crate::error::SdkError;
use crate::reads::{
    ChatLogEntry, EventItem, FlagItem, FunnelRequest, FunnelResult, List, Page, PlayerProfile,
    PunishmentItem, ServerStatus, StaffMember,
};
use crate::transport::{RetryPolicy, Transport};
use chrono::{DateTime, SecondsFormat, Utc};
use reqwest::{Method, Url};
use serde::de::DeserializeOwned;
use uuid::Uuid;

/// Which page of a history list to read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageRequest {
    /// Items per page, 1..=500 (the service's default, 50, when absent).
    pub limit: Option<u32>,
    /// The previous page's `next_cursor`.
    pub cursor: Option<String>,
}

/// Filters of `GET /api/v1/events`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventQuery {
    /// Event names (any of them); all names when empty.
    pub names: Vec<String>,
    /// Only this player's events.
    pub player_uuid: Option<Uuid>,
    /// Occurred at or after.
    pub from: Option<DateTime<Utc>>,
    /// Occurred before.
    pub to: Option<DateTime<Utc>>,
    /// Include internal events (`session_join`, `chat_message`, ...).
    pub internal: bool,
    /// Items per page.
    pub limit: Option<u32>,
    /// The previous page's `next_cursor`.
    pub cursor: Option<String>,
}

/// Reads the dashboard API; cheap to clone.
#[derive(Debug, Clone)]
pub struct DashboardClient {
    transport: Transport,
}

impl DashboardClient {
    /// A client for the service at `base_url`, with a dashboard key (`wdn_dash_…`).
    pub fn new(base_url: &str, dashboard_key: &str) -> Result<Self, SdkError> {
        let agent = concat!("warden-sdk/", env!("CARGO_PKG_VERSION"));
        Ok(DashboardClient {
            transport: Transport::new(base_url, dashboard_key, agent)?,
        })
    }

    /// The same client with another retry policy.
    pub fn with_retry_policy(mut self, policy: RetryPolicy) -> Self {
        self.transport.policy = policy;
        self
    }

    /// A player's profile; `None` when this account has never seen the player.
    pub async fn player(&self, uuid: Uuid) -> Result<Option<PlayerProfile>, SdkError> {
        match self
            .get(self.transport.url(&format!("/api/players/{uuid}")))
            .await
        {
            Err(SdkError::Api { status: 404, .. }) => Ok(None),
            other => other.map(Some),
        }
    }

    /// One page of a player's punishments, newest first.
    pub async fn punishments(
        &self,
        uuid: Uuid,
        page: &PageRequest,
    ) -> Result<Page<PunishmentItem>, SdkError> {
        self.history(uuid, "punishments", page).await
    }

    /// One page of a player's anti-cheat flags, newest first.
    pub async fn flags(&self, uuid: Uuid, page: &PageRequest) -> Result<Page<FlagItem>, SdkError> {
        self.history(uuid, "flags", page).await
    }

    /// One page of a player's chat log, newest first.
    pub async fn chatlog(
        &self,
        uuid: Uuid,
        page: &PageRequest,
    ) -> Result<Page<ChatLogEntry>, SdkError> {
        self.history(uuid, "chatlog", page).await
    }

    /// Every server with its current status.
    pub async fn servers(&self) -> Result<Vec<ServerStatus>, SdkError> {
        let list: List<ServerStatus> = self.get(self.transport.url("/api/servers")).await?;
        Ok(list.items)
    }

    /// The staff roster with online status.
    pub async fn staff(&self) -> Result<Vec<StaffMember>, SdkError> {
        let list: List<StaffMember> = self.get(self.transport.url("/api/staff")).await?;
        Ok(list.items)
    }

    /// One page of the event timeline, newest first.
    pub async fn events(&self, query: &EventQuery) -> Result<Page<EventItem>, SdkError> {
        let time = |at: DateTime<Utc>| at.to_rfc3339_opts(SecondsFormat::Micros, true);
        let mut pairs: Vec<(&str, String)> = query
            .names
            .iter()
            .map(|name| ("name", name.clone()))
            .collect();
        pairs.extend(query.player_uuid.map(|p| ("player_uuid", p.to_string())));
        pairs.extend(query.from.map(|from| ("from", time(from))));
        pairs.extend(query.to.map(|to| ("to", time(to))));
        if query.internal {
            pairs.push(("internal", "true".to_owned()));
        }
        pairs.extend(page_pairs(query.limit, query.cursor.as_deref()));
        self.get(with_query(self.transport.url("/api/v1/events"), &pairs))
            .await
    }

    /// Computes a funnel (distinct players per step).
    pub async fn funnel(&self, request: &FunnelRequest) -> Result<FunnelResult, SdkError> {
        let body = serde_json::to_vec(request).map_err(SdkError::Decode)?;
        let answer = self
            .transport
            .call(
                Method::POST,
                self.transport.url("/api/v1/funnels"),
                Some(body),
            )
            .await?;
        serde_json::from_slice(&answer.body).map_err(SdkError::Decode)
    }

    async fn history<T: DeserializeOwned>(
        &self,
        uuid: Uuid,
        list: &str,
        page: &PageRequest,
    ) -> Result<Page<T>, SdkError> {
        let url = self.transport.url(&format!("/api/players/{uuid}/{list}"));
        let pairs = page_pairs(page.limit, page.cursor.as_deref());
        self.get(with_query(url, &pairs)).await
    }

    async fn get<T: DeserializeOwned>(&self, url: Url) -> Result<T, SdkError> {
        let answer = self.transport.call(Method::GET, url, None).await?;
        serde_json::from_slice(&answer.body).map_err(SdkError::Decode)
    }
}

fn page_pairs(limit: Option<u32>, cursor: Option<&str>) -> Vec<(&'static str, String)> {
    let mut pairs = Vec::new();
    pairs.extend(limit.map(|limit| ("limit", limit.to_string())));
    pairs.extend(cursor.map(|cursor| ("cursor", cursor.to_owned())));
    pairs
}

fn with_query(mut url: Url, pairs: &[(&str, String)]) -> Url {
    if !pairs.is_empty() {
        url.query_pairs_mut().extend_pairs(pairs);
    }
    url
}
