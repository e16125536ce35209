//! Ingest on a 3-node JetStream cluster with a member killed mid-ingest.
//!
//! A test binary of its own: the api binary has a test that measures the process's memory,
//! which this test's concurrent writers would disturb. It shares the api binary's helpers.

// Only some helpers are used here; they are shared with the api binary.
#![allow(dead_code, unreachable_pub)]

#[path = "../api/cluster.rs"]
mod cluster;
#[path = "../api/helpers.rs"]
mod helpers;
