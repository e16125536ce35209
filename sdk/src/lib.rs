//! A Rust client for Warden: typed plugin writes, a non-blocking event tracker, and typed
//! dashboard reads.
//!
//! - [`PluginClient`] writes every record kind of the plugin API (contract §5), one record or a
//!   batch of up to 1,000. Each record gets a client `id` (UUIDv7) when it has none, and a
//!   retry resends exactly the same records, so a write whose answer was lost is stored once.
//!   Calls are retried on network errors, 429 and 5xx: 429 and 503 after their `Retry-After`,
//!   the others with exponential backoff, up to [`RetryPolicy::max_attempts`].
//! - [`EventTracker`] takes custom events with [`EventTracker::track`], which never blocks and
//!   never does HTTP (a bounded queue; a full queue drops and counts). A background task sends
//!   the queue in batches with each sync cycle, on [`EventTracker::flush`] and on
//!   [`EventTracker::shutdown`].
//! - [`DashboardClient`] reads players, their punishments, flags and chat log (paged), servers,
//!   staff, the event timeline and funnels with a dashboard key.
//!
//! The crate does not depend on the service's own crates: its types mirror the API contract
//! (`shared/docs/api-contract.md` in Warden's repository; "contract §N" below cites its
//! sections), and a test checks that every record it writes is accepted by the service's
//! validation.
//!
//! ```no_run
//! use std::time::Duration;
//! use uuid::Uuid;
//! use warden_sdk::{
//!     ChatEntry, ChatEntryType, CustomEvent, DashboardClient, EventTracker, Heartbeat,
//!     PageRequest, PluginClient, TrackerConfig,
//! };
//!
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! let server = Uuid::now_v7();
//! let player = Uuid::parse_str("069a79f4-44e9-4726-a5be-fca90e38aaf5")?;
//! let plugin = PluginClient::new("https://warden.example.com", "wdn_plugin_...")?;
//!
//! // Typed writes: one record, or a batch of one kind.
//! plugin.send(Heartbeat::new(server, 19.9, 42, 100)).await?;
//! let report = plugin
//!     .send_batch(vec![
//!         ChatEntry::new(server, player, ChatEntryType::Chat, "gg"),
//!         ChatEntry::new(server, player, ChatEntryType::Command, "/spawn"),
//!     ])
//!     .await?;
//! assert_eq!(report.accepted + report.duplicates, 2);
//!
//! // Fire-and-forget custom events, sent with the next sync cycle.
//! let config = TrackerConfig { sync_interval: Duration::from_secs(15), ..TrackerConfig::default() };
//! let tracker = EventTracker::spawn(plugin.clone(), config);
//! let event = CustomEvent::new(player, "crate_opened")
//!     .with_properties(serde_json::json!({"tier": "gold"}));
//! if tracker.track(event).is_err() {
//!     // The queue is full: the event was dropped and counted in `tracker.stats().dropped`.
//! }
//! let stats = tracker.shutdown().await; // sends what is queued
//! println!("sent {} events", stats.accepted);
//!
//! // Typed reads.
//! let dashboard = DashboardClient::new("https://warden.example.com", "wdn_dash_...")?;
//! if let Some(profile) = dashboard.player(player).await? {
//!     println!("{:?} played {} s", profile.username, profile.total_playtime);
//! }
//! let chat = dashboard.chatlog(player, &PageRequest { limit: Some(100), cursor: None }).await?;
//! println!("{} chat lines, more: {}", chat.items.len(), chat.next_cursor.is_some());
//! # Ok(())
//! # }
//! ```

mod dashboard;
mod error;
mod plugin;
mod reads;
mod records;
mod tracker;
mod transport;

pub use dashboard::{DashboardClient, EventQuery, PageRequest};
pub use error::{FieldProblem, Problem, RejectedRecord, SdkError, WriteReport};
pub use plugin::{EventAccepted, MAX_BATCH, PluginClient};
pub use reads::{
    ChatLogEntry, EventItem, FlagItem, FunnelOrder, FunnelRequest, FunnelResult, FunnelStep, Join,
    LinkedAccount, List, Page, PlayerProfile, PunishmentItem, ServerStatus, StaffMember,
};
pub use records::{
    AccountLink, AnticheatFlag, ChatEntry, ChatEntryType, CustomEvent, Heartbeat, LinkAction,
    PluginRecord, Punishment, PunishmentAction, PunishmentType, RankAction, RankChange, ServerRole,
    Session, SessionEvent,
};
pub use tracker::{EventTracker, TrackError, TrackerConfig, TrackerStats};
pub use transport::RetryPolicy;

#[cfg(test)]
mod tests;
