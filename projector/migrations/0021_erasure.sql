-- Erased players (issue 18). An erasure is a log record (`erasure`) written by query-api after
-- it destroyed the player's data key; the projector's `erasure` model scrubs every read model
-- of the player's personal fields in the same transaction as its checkpoint, and records the
-- erasure here. query-api polls this table to answer the erase request (200 once the row is
-- here, 202 while the projector is behind) and shows the player as "erased player".
--
-- One row per player: erasing twice keeps the first erasure's time and author (the second
-- one finds nothing left to scrub). A rebuild refills it from the log like any read model.
CREATE TABLE erased_players (
    account_id  uuid        NOT NULL,
    player_uuid uuid        NOT NULL,
    erased_at   timestamptz NOT NULL,
    -- "admin" (the admin key) or the id of the team member who asked: never a name.
    erased_by   text        NOT NULL CHECK (char_length(erased_by) BETWEEN 1 AND 64),
    -- The erasure record's place on the timeline (stream sequence * 1000 + index).
    seq         bigint      NOT NULL,
    PRIMARY KEY (account_id, player_uuid)
);

-- Blanks the named top-level properties of a timeline row (a JSON object), keeping every
-- other property and the row itself: `replacements` maps a property name to the value it
-- takes (null, or "" for a chat message, as a replay of the shredded log reads it). Only
-- properties the row has are touched. The result is re-serialized (jsonb), which only
-- internal events (whose properties the projector wrote itself) ever go through.
CREATE FUNCTION erased_properties(properties json, replacements jsonb) RETURNS json
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN (SELECT coalesce(jsonb_object_agg(p.key, coalesce(replacements -> p.key, p.value)),
                            '{}'::jsonb)::json
            FROM jsonb_each(properties::jsonb) AS p);
