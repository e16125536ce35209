//! Integration tests of the projector: each test runs its own nats-server and database.

mod active_days;
mod anticheat_flags;
mod chat;
mod crash_safety;
mod event_trends;
mod exactly_once;
mod harness;
mod leadership;
mod outages;
mod parked_retry;
mod parking;
mod player_names;
mod players;
mod punishments;
mod read_models_replay;
mod rebuild;
mod registry;
mod replay_property;
mod server_rollups;
mod servers;
mod sessions;
mod stalls;
mod storable_property;
mod timeline;
mod workload;
