//! Privacy (issue 18): sealed personal fields, erasure, retention and export.

mod erasure;
mod keyring;
mod live_stream;
mod properties;
