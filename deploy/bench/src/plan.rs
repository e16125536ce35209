//! How big each measurement is: the full benchmark, or the quick one that CI runs.

use std::time::Duration;

/// The sizes and durations of one run.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// `quick` or `full`.
    pub(crate) mode: &'static str,
    /// Log messages (100 chat records each) in the raw publish baseline.
    pub(crate) raw_publish_messages: usize,
    /// Simulated game servers posting chat batches, one plugin key each.
    pub(crate) chat_servers: usize,
    /// How long they post.
    pub(crate) chat_duration: Duration,
    /// Concurrent clients posting single custom events.
    pub(crate) event_clients: usize,
    /// How long they post.
    pub(crate) event_duration: Duration,
    /// Records in the projector's backlog (the ingest phases' records are topped up to this).
    pub(crate) backlog_records: usize,
    /// How long the sustained ingest + projector phase drives load.
    pub(crate) sustained_duration: Duration,
    /// Live-stream subscribers in the end-to-end phase.
    pub(crate) subscribers: usize,
    /// Events per second posted in the end-to-end phase, and for how long.
    pub(crate) e2e_rate: u32,
    /// How long the end-to-end phase posts.
    pub(crate) e2e_duration: Duration,
    /// The read dataset: chat lines, events and players.
    pub(crate) dataset_chat: usize,
    /// Events in the read dataset.
    pub(crate) dataset_events: usize,
    /// Players in the read dataset.
    pub(crate) dataset_players: usize,
    /// Days the read dataset's chat lines are spread over (keyword search reads the last 7
    /// of them, and all of them).
    pub(crate) dataset_chat_days: i64,
    /// Players (30% with a past name) loaded for the player search measurement.
    pub(crate) search_players: usize,
    /// Players loaded for the retention measurement.
    pub(crate) retention_players: usize,
    /// Their active days in all (about this many per player: day 0 and later days).
    pub(crate) retention_active_days: usize,
    /// Requests per chat keyword measurement (an all-time search may take up to 500 ms).
    pub(crate) chat_searches: usize,
    /// Chat records in the index-cost comparison's own backlog (100-record batches).
    pub(crate) index_cost_records: usize,
    /// Projector catch-ups per side (with and without the chat trigram index), alternated;
    /// the best of each side counts.
    pub(crate) index_cost_rounds: usize,
    /// Requests per read measurement.
    pub(crate) reads_per_query: usize,
    /// Funnel requests.
    pub(crate) funnel_runs: usize,
    /// Events of the trends account (the trends target is a 30-day daily chart over 10M).
    pub(crate) trend_events: usize,
    /// Simulated game servers carrying the steady write load of the reads under load.
    pub(crate) load_servers: usize,
    /// How long that load runs before the reads under it start, so the projector and
    /// PostgreSQL are in their steady state.
    pub(crate) load_settle: Duration,
    /// Open streams for query-api's memory measurement.
    pub(crate) open_streams: usize,
    /// Servers with per-minute history for the dashboard reads.
    pub(crate) history_servers: usize,
    /// Days of that history.
    pub(crate) history_days: i64,
    /// Sequential sign-ins.
    pub(crate) sign_ins: usize,
    /// Sign-ins from several clients at once.
    pub(crate) concurrent_sign_ins: usize,
    /// Punishments posted (one per request) in the alerts phase, each one notification.
    pub(crate) alert_notifications: usize,
    /// How many a second (the alerts target is stated at 100/s).
    pub(crate) alert_rate: u32,
    /// How many clients at once.
    pub(crate) sign_in_clients: usize,
    /// Players of the privacy phase's pool: each gets its data key once, then
    /// every record of theirs reuses it from ingest's cache, as on a real network.
    pub(crate) privacy_players: usize,
    /// How long each timed chat load of the privacy phase runs, per side and round.
    pub(crate) privacy_duration: Duration,
    /// Rounds per side (encryption on and off, alternated) of the privacy phase's ingest load
    /// and of its projector catch-ups.
    pub(crate) privacy_rounds: usize,
    /// Records in the partition scale-out's own backlog (mixed batches).
    pub(crate) partition_records: usize,
    /// Accounts that backlog is spread over (enough for every partition to have work).
    pub(crate) partition_accounts: usize,
    /// Catch-ups per side (one projector process, two), alternated; the best of each counts.
    pub(crate) partition_rounds: usize,
    /// Records of the busy account's backlog in the mixed-tenant measurement (the
    /// target is stated at 1M).
    pub(crate) mixed_backlog_records: usize,
}

impl Plan {
    /// The quick plan (a couple of minutes) or the full one.
    pub(crate) fn new(quick: bool) -> Plan {
        if quick {
            Plan {
                mode: "quick",
                raw_publish_messages: 1_000,
                chat_servers: 32,
                chat_duration: Duration::from_secs(5),
                event_clients: 16,
                event_duration: Duration::from_secs(3),
                backlog_records: 100_000,
                sustained_duration: Duration::from_secs(5),
                subscribers: 100,
                e2e_rate: 20,
                e2e_duration: Duration::from_secs(3),
                dataset_chat: 100_000,
                dataset_events: 40_000,
                dataset_players: 5_000,
                dataset_chat_days: 90,
                search_players: 20_000,
                retention_players: 20_000,
                retention_active_days: 200_000,
                chat_searches: 100,
                index_cost_records: 20_000,
                index_cost_rounds: 2,
                reads_per_query: 100,
                funnel_runs: 3,
                trend_events: 100_000,
                load_servers: 16,
                load_settle: Duration::from_secs(2),
                open_streams: 200,
                history_servers: 5,
                history_days: 2,
                sign_ins: 20,
                concurrent_sign_ins: 8,
                sign_in_clients: 4,
                alert_notifications: 300,
                alert_rate: 100,
                privacy_players: 2_000,
                privacy_duration: Duration::from_secs(3),
                privacy_rounds: 1,
                partition_records: 50_000,
                partition_accounts: 64,
                partition_rounds: 1,
                mixed_backlog_records: 100_000,
            }
        } else {
            Plan {
                mode: "full",
                raw_publish_messages: 10_000,
                chat_servers: 256,
                chat_duration: Duration::from_secs(20),
                event_clients: 64,
                event_duration: Duration::from_secs(10),
                backlog_records: 1_000_000,
                sustained_duration: Duration::from_secs(20),
                subscribers: 100,
                e2e_rate: 50,
                e2e_duration: Duration::from_secs(20),
                dataset_chat: 5_000_000,
                dataset_events: 1_000_000,
                dataset_players: 100_000,
                dataset_chat_days: 90,
                search_players: 1_000_000,
                retention_players: 1_000_000,
                retention_active_days: 10_000_000,
                chat_searches: 200,
                // 1M chat rows, about as many as the earlier shared-backlog runs projected:
                // the index's per-insert work, not the projector's start-up, fills each run.
                index_cost_records: 1_000_000,
                index_cost_rounds: 2,
                reads_per_query: 500,
                funnel_runs: 10,
                // About 8 minutes of loading on 2 cores (45 s a million, then the rollups).
                trend_events: 10_000_000,
                load_servers: 64,
                load_settle: Duration::from_secs(10),
                open_streams: 1_000,
                history_servers: 100,
                history_days: 30,
                sign_ins: 200,
                concurrent_sign_ins: 40,
                sign_in_clients: 4,
                alert_notifications: 3_000,
                alert_rate: 100,
                privacy_players: 20_000,
                privacy_duration: Duration::from_secs(10),
                privacy_rounds: 2,
                partition_records: 1_000_000,
                partition_accounts: 64,
                partition_rounds: 2,
                mixed_backlog_records: 1_000_000,
            }
        }
    }
}
