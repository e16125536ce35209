//! Reads the dashboard's pages and its JSON API share (Overview, server charts, staff): one
//! function per question, each returning plain Rust types, so a page handler and an API
//! handler gather the same data with the same SQL.

pub mod anticheat;
pub mod appeals;
pub mod dashboard_actions;
pub mod erasure;
pub mod event_names;
pub mod investigate;
pub mod notes;
pub mod overview;
pub mod player_search;
pub mod players_online;
pub mod public_appeal;
pub mod retention;
pub mod server_history;
pub mod spells;
pub mod staff_board;
pub mod trends;

pub use overview::{Activity, ActivityKind, NetworkPoint, Overview, overview, recent_activity};
pub use server_history::{ChartPoint, ChartRange, ServerChart, Stats, server_chart};
pub use spells::{Downtime, LOW_TPS_MIN_DURATION, LOW_TPS_THRESHOLD, LowTpsSpell};
pub use staff_board::{LeaderboardEntry, StaffOnDuty, staff_leaderboard, staff_on_duty};
