-- The event timeline (contract §6, §8): every custom event and every internal event the
-- service records itself, in one table, so listing, streaming and funnels read one place.
-- The projector is the only writer; it rebuilds this table from the event log on replay.

CREATE TABLE events (
    account_id  uuid        NOT NULL,
    id          uuid        NOT NULL,
    -- The position in the event log (stream sequence * 1000 + index in the log message, see
    -- shared::envelope::event_seq): a total order that ties the list, the SSE ids and
    -- Last-Event-ID resumption to the log, and breaks ties between equal timestamps.
    seq         bigint      NOT NULL,
    name        text        NOT NULL,
    -- Internal events (session_join, chat_message, punish_ban, ...) are hidden by default.
    is_internal boolean     NOT NULL,
    player_uuid uuid,
    server_id   uuid,
    -- json, not jsonb: the contract returns properties exactly as the client sent them, and
    -- jsonb would reorder keys, drop duplicates and renormalise numbers (1.10 -> 1.1).
    properties  json        NOT NULL,
    -- The client's time (or the time of receipt when it sent none): what the timeline sorts by.
    occurred_at timestamptz NOT NULL,
    received_at timestamptz NOT NULL,
    -- A client id is stored once however late the retry comes, long after JetStream's
    -- duplicate window; the projector inserts with ON CONFLICT DO NOTHING, so the first
    -- logged copy wins and a replay changes nothing.
    PRIMARY KEY (account_id, id)
);

-- Every read is per account, newest first, paged by (occurred_at, seq) keyset cursors; the
-- three shapes below are the events page's filters: none, by name, by player.
CREATE INDEX events_account_time_idx
    ON events (account_id, occurred_at DESC, seq DESC);
CREATE INDEX events_account_name_time_idx
    ON events (account_id, name, occurred_at DESC, seq DESC);
CREATE INDEX events_account_player_time_idx
    ON events (account_id, player_uuid, occurred_at DESC, seq DESC);

-- How far each read model has folded the event log. Advanced in the same transaction as the
-- writes it covers, so PostgreSQL, not the broker, is the truth about what was applied: a
-- crash at any point resumes at last_sequence + 1 and nothing is applied twice or skipped.
-- One row per projection, so a new read model can replay from 0 while the others skip.
CREATE TABLE projection_checkpoints (
    projection    text        PRIMARY KEY,
    last_sequence bigint      NOT NULL CHECK (last_sequence >= 0),
    updated_at    timestamptz NOT NULL DEFAULT now()
);

-- Log messages that can never be applied (undecodable, or written by an unknown envelope
-- version). Parking them keeps the stream moving; keeping the payload lets an operator
-- inspect them and, after an upgrade, re-apply them by hand. Keyed by stream sequence, so a
-- replay parks a message once.
CREATE TABLE parked_messages (
    stream_sequence bigint      PRIMARY KEY,
    subject         text        NOT NULL,
    reason          text        NOT NULL,
    payload         bytea       NOT NULL,
    parked_at       timestamptz NOT NULL DEFAULT now()
);
