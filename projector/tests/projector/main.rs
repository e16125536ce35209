//! Integration tests of the projector: each test runs its own nats-server and database.

mod exactly_once;
mod harness;
mod outages;
mod parking;
mod timeline;
