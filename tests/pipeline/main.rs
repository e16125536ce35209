//! Whole-pipeline tests: a plugin write travels through ingest, JetStream and the projector
//! into PostgreSQL, and comes back out of query-api.

mod timeline;
