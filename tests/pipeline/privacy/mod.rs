//! Privacy: sealed personal fields, erasure, retention and export.

mod erasure;
mod keyring;
mod live_stream;
mod properties;
