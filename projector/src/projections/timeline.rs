//! The event timeline read model: the rows of `events`, mapped from log messages by
//! [`shared::timeline::events_of`] (shared with query-api's live stream, so both agree), and
//! the trends rollups folded from exactly the rows each insert stored (migration 0018):
//! `event_hours` (events per name, UTC hour and server), `event_player_days` (who did each
//! event on each UTC day) and `event_day_players` (how many); and the Overview's newest
//! activity events, `recent_events` ([`recent_activity`]).

use super::bulk::{self, BinaryRows};
use super::{Positioned, recent_activity};
use chrono::{DateTime, NaiveDate, Timelike, Utc};
use shared::timeline::{ACTIVITY_EVENTS, TimelineEvent, events_of};
use sqlx::PgConnection;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use uuid::Uuid;

/// Rows per INSERT: batched, yet bounded so one statement's parameters stay small.
const ROWS_PER_STATEMENT: usize = 2_000;

/// The event timeline: custom and internal events, for listing, streaming and funnels.
#[derive(Debug, Clone, Copy)]
pub struct Timeline;

read_model! {
    Timeline: "timeline",
    tables: [
        "events",
        "event_hours",
        "event_player_days",
        "event_day_players",
        "recent_events",
    ],
    fold: apply,
    bulk: apply_bulk,
}

/// Inserts the timeline rows of `messages`; an event id the account already has is kept as
/// first stored (a late retry, or a replay). Returns the rows inserted.
pub async fn apply(conn: &mut PgConnection, messages: &[&Positioned]) -> Result<u64, sqlx::Error> {
    let events: Vec<TimelineEvent> = messages
        .iter()
        .flat_map(|m| events_of(m.stream_sequence, &m.message))
        .collect();
    let mut inserted = 0;
    let mut activity = HashSet::new();
    for batch in events.chunks(ROWS_PER_STATEMENT) {
        inserted += insert_batch(conn, batch, &mut activity).await?;
    }
    keep_stored_activity(conn, &events, &activity).await?;
    Ok(inserted)
}

/// Adds the activity events among `events` that an insert stored (`stored`: their account and
/// id) to the Overview's `recent_events`, once for a whole chunk.
async fn keep_stored_activity(
    conn: &mut PgConnection,
    events: &[TimelineEvent],
    stored: &HashSet<(Uuid, Uuid)>,
) -> Result<(), sqlx::Error> {
    if !stored.is_empty() {
        let stored_events = events
            .iter()
            .filter(|e| stored.contains(&(e.account_id, e.id)));
        recent_activity::keep_events(conn, stored_events).await?;
    }
    Ok(())
}

/// Inserts `events` in one UNNEST statement (first stored copy of an id wins) and, in the same
/// statement, adds the rows it actually inserted (`RETURNING`) to the trends rollups, so a
/// duplicate or a replay is never counted twice; the activity events among them go to the
/// Overview's `recent_events` ([`recent_activity`]). Public so the benchmark's raw-insert baseline
/// measures exactly this statement (and its seeded events have their rollups).
pub async fn insert_events(
    conn: &mut PgConnection,
    events: &[TimelineEvent],
) -> Result<u64, sqlx::Error> {
    let mut activity = HashSet::new();
    let inserted = insert_batch(conn, events, &mut activity).await?;
    keep_stored_activity(conn, events, &activity).await?;
    Ok(inserted)
}

/// [`insert_events`]'s statement: adds the (account, id) of the activity events it stored to
/// `activity` rather than copying them, so a chunk of many batches copies once.
async fn insert_batch(
    conn: &mut PgConnection,
    events: &[TimelineEvent],
    activity: &mut HashSet<(Uuid, Uuid)>,
) -> Result<u64, sqlx::Error> {
    let column = |f: fn(&TimelineEvent) -> Option<Uuid>| events.iter().map(f).collect::<Vec<_>>();
    let (inserted, stored_accounts, stored_ids): (i64, Vec<Uuid>, Vec<Uuid>) = sqlx::query_as(
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
         RETURNING account_id, id, name, player_uuid, server_id, occurred_at
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
         SELECT count(*),
                coalesce(array_agg(account_id) FILTER (WHERE name = ANY($11)), '{}'),
                coalesce(array_agg(id) FILTER (WHERE name = ANY($11)), '{}')
         FROM inserted",
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
    .bind(&ACTIVITY_EVENTS[..])
    .fetch_one(conn)
    .await?;
    activity.extend(stored_accounts.into_iter().zip(stored_ids));
    Ok(u64::try_from(inserted).unwrap_or(0))
}

/// [`apply`] into a rebuild's copy: one binary `COPY` of the events and the rollups of every
/// event copied (as [`insert_events`] adds those of the rows it inserted), under a savepoint;
/// [`apply`] when PostgreSQL refuses any of it (a repeated id, a value it refuses), so a
/// refused message is refused by [`apply`]'s statement, as on the live projector.
pub(crate) async fn apply_bulk(
    conn: &mut PgConnection,
    messages: &[&Positioned],
) -> Result<u64, sqlx::Error> {
    use sqlx::Connection;
    let events: Vec<TimelineEvent> = messages
        .iter()
        .flat_map(|m| events_of(m.stream_sequence, &m.message))
        .collect();
    if events.is_empty() {
        return Ok(0);
    }
    let mut savepoint = conn.begin().await?;
    match copy_events(&mut savepoint, &events).await {
        Ok(()) => {
            savepoint.commit().await?;
            Ok(events.len() as u64)
        }
        Err(sqlx::Error::Database(error)) => {
            tracing::debug!(%error, "COPY of events refused; applying them with statements");
            savepoint.rollback().await?;
            apply(conn, messages).await
        }
        Err(error) => Err(error),
    }
}

/// Copies `events` into `events` and adds every one of them to the rollups and the recent
/// activity.
async fn copy_events(conn: &mut PgConnection, events: &[TimelineEvent]) -> Result<(), sqlx::Error> {
    let mut rows = BinaryRows::new(10);
    for e in events {
        rows.row()
            .uuid(e.account_id)
            .uuid(e.id)
            .bigint(e.seq)
            .text(&e.name)
            .boolean(e.is_internal)
            .uuid_or_null(e.player_uuid)
            .uuid_or_null(e.server_id)
            .text(&e.properties)
            .timestamptz(e.occurred_at)
            .timestamptz(e.received_at);
    }
    bulk::copy_in(
        conn,
        "events (account_id, id, seq, name, is_internal, player_uuid, server_id, properties, \
         occurred_at, received_at)",
        rows,
    )
    .await?;
    recent_activity::keep_events(&mut *conn, events).await?;
    let rollups = Rollups::of(events);
    for part in super::statement_ranges(
        rollups.hours.len().max(rollups.days.len()),
        ROWS_PER_STATEMENT,
    ) {
        add_rollups(conn, &rollups, part).await?;
    }
    Ok(())
}

/// (account, name, UTC hour, server or the nil id): a row of `event_hours`.
type HourKey<'a> = (Uuid, &'a str, DateTime<Utc>, Uuid);

/// What [`insert_events`]'s statement adds to the trends rollups for rows it inserted.
#[derive(Debug, Default, PartialEq)]
struct Rollups<'a> {
    /// Events per hour key.
    hours: Vec<(HourKey<'a>, i64)>,
    /// (account, name, UTC day, player) of the events with a player, without repeats.
    days: Vec<(Uuid, &'a str, NaiveDate, Uuid)>,
}

impl<'a> Rollups<'a> {
    fn of(events: &'a [TimelineEvent]) -> Self {
        let mut hours: BTreeMap<HourKey<'_>, i64> = BTreeMap::new();
        let mut days = BTreeSet::new();
        for e in events {
            // date_trunc('hour', occurred_at, 'UTC'): whole microseconds below the hour go.
            let hour = e
                .occurred_at
                .with_nanosecond(0)
                .and_then(|t| t.with_second(0))
                .and_then(|t| t.with_minute(0))
                .unwrap_or(e.occurred_at);
            let key = (
                e.account_id,
                e.name.as_str(),
                hour,
                e.server_id.unwrap_or_default(),
            );
            *hours.entry(key).or_default() += 1;
            if let Some(player) = e.player_uuid {
                days.insert((
                    e.account_id,
                    e.name.as_str(),
                    e.occurred_at.date_naive(),
                    player,
                ));
            }
        }
        Rollups {
            hours: hours.into_iter().collect(),
            days: days.into_iter().collect(),
        }
    }
}

/// Adds the hours and days of `rollups` in `part` (each list cut to it) to the rollups, and
/// each day newly stored to its count, as [`insert_events`] does.
async fn add_rollups(
    conn: &mut PgConnection,
    rollups: &Rollups<'_>,
    part: std::ops::Range<usize>,
) -> Result<(), sqlx::Error> {
    let cut = |len: usize| part.start.min(len)..part.end.min(len);
    let hours = &rollups.hours[cut(rollups.hours.len())];
    let days = &rollups.days[cut(rollups.days.len())];
    sqlx::query(
        "WITH hours AS (
         INSERT INTO event_hours (account_id, name, hour, server_id, events)
         SELECT * FROM UNNEST($1::uuid[], $2::text[], $3::timestamptz[], $4::uuid[], $5::bigint[])
         ON CONFLICT (account_id, name, hour, server_id)
             DO UPDATE SET events = event_hours.events + excluded.events
         ), days AS (
         INSERT INTO event_player_days (account_id, name, day, player_uuid)
         SELECT * FROM UNNEST($6::uuid[], $7::text[], $8::date[], $9::uuid[])
         ON CONFLICT DO NOTHING
         RETURNING account_id, name, day
         )
         INSERT INTO event_day_players (account_id, name, day, players)
         SELECT account_id, name, day, count(*)
         FROM days
         GROUP BY 1, 2, 3
         ON CONFLICT (account_id, name, day)
             DO UPDATE SET players = event_day_players.players + excluded.players",
    )
    .bind(hours.iter().map(|((a, ..), _)| *a).collect::<Vec<_>>())
    .bind(hours.iter().map(|((_, n, ..), _)| *n).collect::<Vec<_>>())
    .bind(hours.iter().map(|((_, _, h, _), _)| *h).collect::<Vec<_>>())
    .bind(hours.iter().map(|((.., s), _)| *s).collect::<Vec<_>>())
    .bind(hours.iter().map(|(_, count)| *count).collect::<Vec<_>>())
    .bind(days.iter().map(|(a, ..)| *a).collect::<Vec<_>>())
    .bind(days.iter().map(|(_, n, ..)| *n).collect::<Vec<_>>())
    .bind(days.iter().map(|(_, _, d, _)| *d).collect::<Vec<_>>())
    .bind(days.iter().map(|(.., p)| *p).collect::<Vec<_>>())
    .execute(conn)
    .await?;
    Ok(())
}
