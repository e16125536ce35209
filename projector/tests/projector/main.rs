//! Integration tests of the projector: each test runs its own nats-server and database.

mod anticheat_flags;
mod chat;
mod exactly_once;
mod harness;
mod outages;
mod parking;
mod players;
mod punishments;
mod read_models_replay;
mod replay_property;
mod servers;
mod sessions;
mod timeline;
