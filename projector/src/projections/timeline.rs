//! The event timeline read model: the rows of `events`, mapped from log messages by
//! [`shared::timeline::events_of`] (shared with query-api's live stream, so both agree), and
//! the trends rollups folded from exactly the rows each insert stored (migration 0018):
//! `event_hours` (events per name, UTC hour and server), `event_player_days` (who did each
//! event on each UTC day) and `event_day_players` (how many).

use super::Positioned;
use shared::timeline::{TimelineEvent, events_of};
use sqlx::PgConnection;
use uuid::Uuid;

/// Rows per INSERT: batched, yet bounded so one statement's parameters stay small.
const ROWS_PER_STATEMENT: usize = 2_000;

/// The event timeline: custom and internal events, for listing, streaming and funnels.
#[derive(Debug, Clone, Copy)]
pub struct Timeline;

read_model! {
    Timeline: "timeline",
    tables: ["events", "event_hours", "event_player_days", "event_day_players"],
    fold: apply,
}

/// Inserts the timeline rows of `messages`; an event id the account already has is kept as
/// first stored (a late retry, or a replay). Returns the rows inserted.
pub async fn apply(conn: &mut PgConnection, messages: &[&Positioned]) -> Result<u64, sqlx::Error> {
    let events: Vec<TimelineEvent> = messages
        .iter()
        .flat_map(|m| events_of(m.stream_sequence, &m.message))
        .collect();
    let mut inserted = 0;
    for batch in events.chunks(ROWS_PER_STATEMENT) {
        inserted += insert_events(conn, batch).await?;
    }
    Ok(inserted)
}

/// Inserts `events` in one UNNEST statement (first stored copy of an id wins) and, in the same
/// statement, adds the rows it actually inserted (`RETURNING`) to the trends rollups, so a
/// duplicate or a replay is never counted twice. Public so the benchmark's raw-insert baseline
/// measures exactly this statement (and its seeded events have their rollups).
pub async fn insert_events(
    conn: &mut PgConnection,
    events: &[TimelineEvent],
) -> Result<u64, sqlx::Error> {
    let column = |f: fn(&TimelineEvent) -> Option<Uuid>| events.iter().map(f).collect::<Vec<_>>();
    let inserted: i64 = sqlx::query_scalar(
        "WITH inserted AS (
         INSERT INTO events (account_id, id, seq, name, is_internal, player_uuid, server_id,
                             properties, occurred_at, received_at)
         SELECT account_id, id, seq, name, is_internal, player_uuid, server_id,
                properties::json, occurred_at, received_at
         FROM UNNEST($1::uuid[], $2::uuid[], $3::bigint[], $4::text[], $5::boolean[],
                     $6::uuid[], $7::uuid[], $8::text[], $9::timestamptz[], $10::timestamptz[])
              AS t(account_id, id, seq, name, is_internal, player_uuid, server_id,
                   properties, occurred_at, received_at)
         ON CONFLICT (account_id, id) DO NOTHING
         RETURNING account_id, name, player_uuid, server_id, occurred_at
         ), hours AS (
         INSERT INTO event_hours (account_id, name, hour, server_id, events)
         SELECT account_id, name, date_trunc('hour', occurred_at, 'UTC'),
                coalesce(server_id, '00000000-0000-0000-0000-000000000000'), count(*)
         FROM inserted
         GROUP BY 1, 2, 3, 4
         ON CONFLICT (account_id, name, hour, server_id)
             DO UPDATE SET events = event_hours.events + excluded.events
         ), days AS (
         INSERT INTO event_player_days (account_id, name, day, player_uuid)
         SELECT DISTINCT account_id, name, (occurred_at AT TIME ZONE 'UTC')::date,
                player_uuid
         FROM inserted
         WHERE player_uuid IS NOT NULL
         ON CONFLICT DO NOTHING
         RETURNING account_id, name, day
         ), day_players AS (
         INSERT INTO event_day_players (account_id, name, day, players)
         SELECT account_id, name, day, count(*)
         FROM days
         GROUP BY 1, 2, 3
         ON CONFLICT (account_id, name, day)
             DO UPDATE SET players = event_day_players.players + excluded.players
         )
         SELECT count(*) FROM inserted",
    )
    .bind(events.iter().map(|e| e.account_id).collect::<Vec<_>>())
    .bind(events.iter().map(|e| e.id).collect::<Vec<_>>())
    .bind(events.iter().map(|e| e.seq).collect::<Vec<_>>())
    .bind(events.iter().map(|e| e.name.as_str()).collect::<Vec<_>>())
    .bind(events.iter().map(|e| e.is_internal).collect::<Vec<_>>())
    .bind(column(|e| e.player_uuid))
    .bind(column(|e| e.server_id))
    .bind(
        events
            .iter()
            .map(|e| e.properties.as_str())
            .collect::<Vec<_>>(),
    )
    .bind(events.iter().map(|e| e.occurred_at).collect::<Vec<_>>())
    .bind(events.iter().map(|e| e.received_at).collect::<Vec<_>>())
    .fetch_one(conn)
    .await?;
    Ok(u64::try_from(inserted).unwrap_or(0))
}
