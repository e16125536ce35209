-- Staff notes on players and their punishments (issue 15): one row per `note` record of the
-- log, written by the notes read model. Notes come only from the dashboard (query-api logs
-- them), so a rebuild replays them like every other record; a note id is stored once
-- (ON CONFLICT DO NOTHING), so a replay or a redelivery changes nothing.
CREATE TABLE notes (
    account_id        uuid        NOT NULL,
    id                uuid        NOT NULL,
    player_uuid       uuid        NOT NULL,
    -- One of the player's punishments when the note is about it (not a foreign key: the
    -- punishments model is rebuilt on its own, and the log is the source of truth).
    punishment_id     uuid,
    text              text        NOT NULL,
    -- The evidence links, a JSON array of strings (0..=5 http(s) links): small, read whole,
    -- never searched, and a jsonb array binds through UNNEST where a text[][] would flatten.
    evidence          jsonb       NOT NULL DEFAULT '[]',
    author_member_id  uuid        NOT NULL,
    -- The author's display name when they wrote it (members may be renamed or removed).
    author_name       text        NOT NULL,
    written_at        timestamptz NOT NULL,
    -- The record's timeline position (stream sequence * 1000 + index).
    seq               bigint      NOT NULL,
    PRIMARY KEY (account_id, id)
);

-- A player's notes newest first, keyset-paged: one index range per page.
CREATE INDEX notes_player_time_idx ON notes (account_id, player_uuid, written_at DESC, id DESC);
