//! Alerts and signed webhooks: what the admin API accepts, what the notifier
//! (`projector notify`) evaluates and sends, written once for both.
//!
//! - [`rules`]: the kinds of rule and their parameters ([`RuleSpec`]), parsed and validated;
//! - [`destinations`]: webhook and Discord URLs, and the SSRF policy ([`NetworkPolicy`]) that
//!   refuses private, loopback and link-local addresses unless the operator allows them;
//! - [`signing`]: Standard Webhooks signatures (`webhook-id`, `webhook-timestamp`,
//!   `webhook-signature`);
//! - [`sealing`]: signing secrets sealed at rest with `WEBHOOK_SECRETS_KEY` ([`SealingKey`]);
//! - [`notification`]: the event types and the message body a webhook receives;
//! - [`discord`]: the same notification as a readable Discord embed;
//! - [`config`]: `WEBHOOK_SECRETS_KEY` and `WEBHOOK_ALLOW_NETWORKS` ([`AlertsConfig`]).
//!
//! Nothing here does I/O: query-api and the notifier call it from their own handlers.

pub mod config;
pub mod destinations;
pub mod discord;
pub mod notification;
pub mod rules;
pub mod sealing;
pub mod signing;

pub use config::AlertsConfig;
pub use destinations::{
    DestinationError, DestinationKind, ForbiddenAddress, NetworkPolicy, check_url,
};
pub use notification::EventType;
pub use rules::{RuleKind, RuleSpec, StaffDirection};
pub use sealing::{SealingError, SealingKey};
pub use signing::SigningError;
