//! Ingest against a real nats-server: every plugin write, the check order, and failure modes.

// Items are shared between the test modules of this binary only.
#![allow(unreachable_pub)]

mod actions;
mod appeal_links;
mod auth;
mod document;
mod hardening;
mod helpers;
mod key_sync;
mod log_failures;
mod partitions;
mod privacy;
mod rate_limits;
mod request_heads;
mod route_families;
mod server_roles;
mod slow_link;
mod start_up;
mod storable;
mod writes;
