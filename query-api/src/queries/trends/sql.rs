//! The one SQL statement behind every trend, assembled from fixed fragments (never from
//! request text: the property name and event names are bound parameters).
//!
//! Where it reads, and what that costs:
//! - totals, overall or per server: `event_hours` (hour rows of the range, one per server
//!   that had the event: a 30-day chart of one event reads at most 720 x servers rows);
//! - unique players per day of one event: `event_day_players` (one row per day);
//! - unique players per week, or per day of a kind made of several events (punishments):
//!   `event_player_days`, a count of distinct players over every (day, player) row of the
//!   range: about a second for a million such rows on 2 cores;
//! - everything else (unique per hour, unique per server, any property breakdown): the
//!   `events` rows of the range through `events_account_name_time_idx`, i.e. one heap row
//!   per event: seconds for millions of events in the range;
//! - anti-cheat flags: `anticheat_flags` through `anticheat_flags_account_time_idx`.

use super::{Breakdown, Measure, Subject, TrendSpec};

/// Most breakdown values shown on their own; the rest are summed (or united) as "other".
pub const TOP_VALUES: i64 = 10;

/// Where the rows come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Source {
    /// `event_hours`: totals only.
    Hours,
    /// `event_day_players`: unique players per day of one event name.
    DayPlayers,
    /// `event_player_days`: unique players per day or week, no breakdown.
    PlayerDays,
    /// `events`: anything.
    Events,
    /// `anticheat_flags`.
    Flags,
}

/// The cheapest source that answers `spec`.
pub(super) fn source(spec: &TrendSpec) -> Source {
    match (&spec.subject, spec.measure, &spec.breakdown) {
        (Subject::Flags, _, _) => Source::Flags,
        (Subject::Events(_), Measure::Total, Breakdown::None | Breakdown::Server) => Source::Hours,
        (Subject::Events(names), Measure::Unique, Breakdown::None)
            if spec.bucket == super::Bucket::Day && names.len() == 1 =>
        {
            Source::DayPlayers
        }
        (Subject::Events(_), Measure::Unique, Breakdown::None)
            if spec.bucket != super::Bucket::Hour =>
        {
            Source::PlayerDays
        }
        (Subject::Events(_), _, _) => Source::Events,
    }
}

/// The statement for `spec`. Parameters: $1 account, $2 start of the whole range (the
/// previous period's when comparing), $3 its end, $4 the date_trunc unit, $5 start of the
/// current period, then the event names ($6; not for flags), then the property name (a
/// property breakdown only: $7, or $6 for flags). Rows: bucket, current (in the current
/// period, not the previous), series (the breakdown value; NULL for "other" and when not
/// broken down), other, value.
pub(super) fn statement(spec: &TrendSpec) -> String {
    let source = source(spec);
    // time: the bucketed column; range: the WHERE clause on it (the index's own column).
    let (table, time, range, weight, player, names) = match source {
        Source::Hours => (
            "event_hours",
            "hour",
            "hour >= $2 AND hour < $3",
            "events",
            "NULL::uuid",
            " AND name = ANY($6)",
        ),
        Source::DayPlayers => (
            "event_day_players",
            "(day::timestamp AT TIME ZONE 'UTC')",
            "day >= ($2 AT TIME ZONE 'UTC')::date AND day < ($3 AT TIME ZONE 'UTC')::date",
            "players",
            "NULL::uuid",
            " AND name = ANY($6)",
        ),
        Source::PlayerDays => (
            "event_player_days",
            "(day::timestamp AT TIME ZONE 'UTC')",
            "day >= ($2 AT TIME ZONE 'UTC')::date AND day < ($3 AT TIME ZONE 'UTC')::date",
            "1",
            "player_uuid",
            " AND name = ANY($6)",
        ),
        Source::Events => (
            "events",
            "occurred_at",
            "occurred_at >= $2 AND occurred_at < $3",
            "1",
            "player_uuid",
            " AND name = ANY($6)",
        ),
        Source::Flags => (
            "anticheat_flags",
            "flagged_at",
            "flagged_at >= $2 AND flagged_at < $3",
            "1",
            "player_uuid",
            "",
        ),
    };
    let key = match (&spec.breakdown, source) {
        (Breakdown::None, _) => "NULL::text",
        // The rollup's nil uuid is "no server", as a missing server is in the raw tables.
        (Breakdown::Server, Source::Hours) => {
            "CASE WHEN server_id = '00000000-0000-0000-0000-000000000000' THEN ''
                  ELSE server_id::text END"
        }
        (Breakdown::Server, _) => "coalesce(server_id::text, '')",
        // A flag has no properties object: its text columns stand for them, and any other
        // name is missing on every flag (all "other"), as a missing property is on events.
        (Breakdown::Property(_), Source::Flags) => {
            "CASE $6 WHEN 'check_name' THEN check_name WHEN 'check_type' THEN check_type
                     WHEN 'source_plugin' THEN source_plugin END"
        }
        (Breakdown::Property(_), _) => "properties ->> $7",
    };
    // The day counts are already distinct players: summed over the one name, like totals.
    let agg = match (spec.measure, source) {
        (Measure::Total, _) | (Measure::Unique, Source::DayPlayers) => "sum(weight)::bigint",
        (Measure::Unique, _) => "count(DISTINCT player_uuid)",
    };
    let (top, series) = if spec.breakdown == Breakdown::None {
        (
            String::new(),
            "NULL::text AS series, false AS other FROM rows",
        )
    } else {
        (
            format!(
                ", top AS (
                     SELECT key FROM rows WHERE bucket >= $5 AND key IS NOT NULL
                     GROUP BY key ORDER BY {agg} DESC, key LIMIT {TOP_VALUES}
                 )"
            ),
            "top.key AS series, top.key IS NULL AS other
             FROM rows LEFT JOIN top ON top.key = rows.key",
        )
    };
    format!(
        "WITH rows AS (
             SELECT date_trunc($4, {time}, 'UTC') AS bucket, {key} AS key,
                    {weight} AS weight, {player} AS player_uuid
             FROM {table}
             WHERE account_id = $1 AND {range}{names}
         ){top}
         SELECT bucket, current, series, other, {agg} AS value
         FROM (SELECT rows.bucket, rows.bucket >= $5 AS current, rows.weight,
                      rows.player_uuid, {series}) r
         GROUP BY bucket, current, series, other"
    )
}
