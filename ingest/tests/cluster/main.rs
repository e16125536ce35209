//! Ingest under many concurrent writers: on a 3-node JetStream cluster with a member killed
//! mid-ingest, and concurrent writes for one subject merged into shared publishes.
//!
//! A test binary of its own: the api binary has a test that measures the process's memory,
//! which these tests' concurrent writers would disturb. It shares the api binary's helpers.

// Only some helpers are used here; they are shared with the api binary.
#![allow(dead_code, unreachable_pub)]

#[path = "../api/cluster.rs"]
mod cluster;
#[path = "../api/coalescing.rs"]
mod coalescing;
#[path = "../api/helpers.rs"]
mod helpers;
#[path = "../api/slow_link.rs"]
mod slow_link;
