-- Punishments, anti-cheat flags and chat: the moderation history of every player
-- (contract §7). Each row is keyed by its record's event id, so a record is stored once
-- however late its retry comes.

CREATE TABLE punishments (
    account_id       uuid        NOT NULL,
    id               uuid        NOT NULL,
    player_uuid      uuid        NOT NULL,
    type             text        NOT NULL CHECK (type IN ('ban', 'mute', 'kick', 'warning')),
    reason           text,
    staff_uuid       uuid,
    staff_name       text,
    server_id        uuid,
    issued_at        timestamptz NOT NULL,
    -- NULL = permanent (always NULL for kicks). is_active = not revoked and not expired,
    -- worked out at read time against now().
    expires_at       timestamptz,
    ip_based         boolean     NOT NULL DEFAULT false,
    scope            text,
    source_plugin    text,
    external_id      text,
    -- From the earliest revoke in the log that names it (see punishment_revokes): its time
    -- (the revoke record's issued_at), staff member and reason. NULL while not revoked.
    revoked_at       timestamptz,
    revoked_by       uuid,
    revoked_by_name  text,
    revoke_reason    text,
    PRIMARY KEY (account_id, id)
);

-- A punishment plugin's own id names one punishment: revokes find it by this, and the same
-- plugin punishment reported twice under two record ids is stored once (the first logged).
-- The type is part of the key because plugins number each type separately (LiteBans keeps
-- bans, mutes, warnings and kicks in four tables with their own ids: ban 17 and mute 17 are
-- two punishments).
CREATE UNIQUE INDEX punishments_external_idx
    ON punishments (account_id, (coalesce(source_plugin, '')), type, external_id)
    WHERE external_id IS NOT NULL;
-- A player's history, newest first.
CREATE INDEX punishments_player_time_idx ON punishments (account_id, player_uuid, issued_at DESC, id DESC);
-- Staff detection: who punished in the last 30 days.
CREATE INDEX punishments_staff_time_idx ON punishments (account_id, staff_uuid, issued_at DESC)
    WHERE staff_uuid IS NOT NULL;

-- Every revoke record, kept so the outcome does not depend on arrival order: a revoke logged
-- before its issue (a plugin's retried issue, two plugins racing) still ends the punishment
-- once the issue arrives, and when several revokes name one punishment the earliest in the
-- log wins. Re-applying any part of the log therefore changes nothing: the projector sets
-- punishments.revoked_* only while revoked_at IS NULL, always from the earliest matching row
-- here. Internal to the projector; reads use punishments.revoked_* only.
CREATE TABLE punishment_revokes (
    account_id       uuid        NOT NULL,
    -- The revoke record's own event id: a revoke logged twice is kept once, as first logged.
    id               uuid        NOT NULL,
    -- Position in the event log (shared::envelope::event_seq): "earliest revoke wins".
    seq              bigint      NOT NULL,
    -- What it names: a punishment record id, or a plugin's (source_plugin, type, external_id).
    punishment_id    uuid,
    source_plugin    text,
    type             text        NOT NULL CHECK (type IN ('ban', 'mute', 'kick', 'warning')),
    external_id      text,
    revoked_at       timestamptz NOT NULL,
    revoked_by       uuid,
    revoked_by_name  text,
    revoke_reason    text,
    PRIMARY KEY (account_id, id)
);

CREATE INDEX punishment_revokes_id_idx ON punishment_revokes (account_id, punishment_id, seq)
    WHERE punishment_id IS NOT NULL;
CREATE INDEX punishment_revokes_external_idx
    ON punishment_revokes (account_id, (coalesce(source_plugin, '')), type, external_id, seq)
    WHERE external_id IS NOT NULL;

CREATE TABLE anticheat_flags (
    account_id       uuid             NOT NULL,
    id               uuid             NOT NULL,
    player_uuid      uuid             NOT NULL,
    server_id        uuid             NOT NULL,
    check_name       text             NOT NULL,
    check_type       text,
    violation_level  double precision NOT NULL,
    detail           text,
    source_plugin    text,
    is_experimental  boolean          NOT NULL DEFAULT false,
    ping_ms          double precision,
    tps              double precision,
    flagged_at       timestamptz      NOT NULL,
    PRIMARY KEY (account_id, id)
);

CREATE INDEX anticheat_flags_player_time_idx ON anticheat_flags (account_id, player_uuid, flagged_at DESC, id DESC);

-- Chat is the largest table (tens of millions of rows). It is not partitioned: a partitioned
-- table's unique keys must include the partition column, and the exactly-once key is the
-- event id alone (a retry of a record without sent_at gets a new receipt time). Instead the
-- index plan serves every read from an index range: the chatlog is one player's newest N,
-- read backwards from (account_id, player_uuid, sent_at DESC, id DESC) with no sort, however
-- long the player's history; the primary key backs deduplication. Inserts append to both.
CREATE TABLE chat_messages (
    account_id   uuid        NOT NULL,
    id           uuid        NOT NULL,
    player_uuid  uuid        NOT NULL,
    server_id    uuid        NOT NULL,
    entry_type   text        NOT NULL CHECK (entry_type IN ('chat', 'command')),
    message      text        NOT NULL,
    channel      text,
    sent_at      timestamptz NOT NULL,
    PRIMARY KEY (account_id, id)
);

CREATE INDEX chat_messages_player_time_idx ON chat_messages (account_id, player_uuid, sent_at DESC, id DESC);
