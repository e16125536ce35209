-- Trends (issue 16): hourly counts of every timeline event, the UTC days each player did
-- each event and the number of such players per day, so a 30-day chart reads a few thousand rollup rows instead of millions of
-- events. Both belong to the timeline read model and are written by the same statement that
-- stores the events (projector::projections::timeline::insert_events), from exactly the rows
-- that INSERT ... ON CONFLICT DO NOTHING RETURNING reports as inserted: an event logged twice
-- (a late retry under the same id), a replayed message or a parked message re-applied later
-- counts once, when and only when its `events` row is first stored. A rebuild of the timeline
-- rebuilds all three with the events.

-- Events per (account, name, UTC hour, server). Events without a server (custom events) use
-- the nil uuid, because a primary key column cannot be NULL; reads turn it back into "no
-- server". Day and week charts sum hours (date_trunc with 'UTC'), so buckets are UTC.
CREATE TABLE event_hours (
    account_id  uuid        NOT NULL,
    name        text        NOT NULL,
    hour        timestamptz NOT NULL,
    server_id   uuid        NOT NULL,
    events      bigint      NOT NULL CHECK (events > 0),
    PRIMARY KEY (account_id, name, hour, server_id)
);

-- The players who did an event on a UTC day: unique players per day or week are one
-- index-only range scan (count distinct over the days of the bucket). A set, inserted
-- ON CONFLICT DO NOTHING. Unique players per hour, and per server, read `events` itself
-- (see query-api's queries::trends).
CREATE TABLE event_player_days (
    account_id  uuid NOT NULL,
    name        text NOT NULL,
    day         date NOT NULL,
    player_uuid uuid NOT NULL,
    PRIMARY KEY (account_id, name, day, player_uuid)
);

-- Unique players per (account, name, UTC day): the size of each day's set above, added to
-- from exactly the set rows an insert stored (RETURNING), so a daily unique chart reads one
-- row per day. A 30-day chart of a busy event otherwise counts millions of set rows.
CREATE TABLE event_day_players (
    account_id  uuid   NOT NULL,
    name        text   NOT NULL,
    day         date   NOT NULL,
    players     bigint NOT NULL CHECK (players > 0),
    PRIMARY KEY (account_id, name, day)
);

-- The events stored before this migration: counted once here (one pass over `events`), so
-- the rollups hold the whole history from the start.
INSERT INTO event_hours (account_id, name, hour, server_id, events)
SELECT account_id, name, date_trunc('hour', occurred_at, 'UTC'),
       coalesce(server_id, '00000000-0000-0000-0000-000000000000'), count(*)
FROM events
GROUP BY 1, 2, 3, 4;

INSERT INTO event_player_days (account_id, name, day, player_uuid)
SELECT DISTINCT account_id, name, (occurred_at AT TIME ZONE 'UTC')::date, player_uuid
FROM events
WHERE player_uuid IS NOT NULL;

INSERT INTO event_day_players (account_id, name, day, players)
SELECT account_id, name, day, count(*)
FROM event_player_days
GROUP BY 1, 2, 3;
