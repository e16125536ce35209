-- The Overview's activity list as small read models: the newest joins, quits, punishments,
-- revokes and rank changes of each account (recent_events, timeline model) and its newest
-- anti-cheat flags (recent_flags, anti-cheat model), at most 100 rows each per account
-- (shared::timeline::RECENT_ACTIVITY_KEPT). Each model adds the rows its fold stored to its
-- table in the same transaction and deletes the account's rows past the newest 100, so the
-- Overview reads two index ranges of 50 rows instead of the timeline and the flags.
--
-- recent_events keeps the events row's columns the list shows; the erasure scrub and the
-- sessions retention change it as they change events, the flags retention recent_flags.

CREATE TABLE recent_events (
    account_id  uuid        NOT NULL,
    id          uuid        NOT NULL,
    seq         bigint      NOT NULL,
    name        text        NOT NULL,
    player_uuid uuid,
    server_id   uuid,
    properties  json        NOT NULL,
    occurred_at timestamptz NOT NULL,
    PRIMARY KEY (account_id, id)
);

CREATE INDEX recent_events_account_time_idx
    ON recent_events (account_id, occurred_at DESC, seq DESC, id DESC);

CREATE TABLE recent_flags (
    account_id  uuid        NOT NULL,
    id          uuid        NOT NULL,
    player_uuid uuid        NOT NULL,
    server_id   uuid        NOT NULL,
    check_name  text        NOT NULL,
    check_type  text,
    flagged_at  timestamptz NOT NULL,
    PRIMARY KEY (account_id, id)
);

CREATE INDEX recent_flags_account_time_idx
    ON recent_flags (account_id, flagged_at DESC, id DESC);

-- Filled from what the timeline and the flags hold now: per account, the newest 100 of each
-- event name (one index range each), then the newest 100 of those.
INSERT INTO recent_events (account_id, id, seq, name, player_uuid, server_id, properties,
                           occurred_at)
SELECT r.account_id, r.id, r.seq, r.name, r.player_uuid, r.server_id, r.properties,
       r.occurred_at
FROM accounts a
CROSS JOIN LATERAL (
    SELECT e.* FROM unnest(ARRAY['session_join', 'session_quit', 'punish_ban', 'punish_mute',
                                 'punish_kick', 'punish_warning', 'punish_revoke',
                                 'rank_change']) AS n(name)
    CROSS JOIN LATERAL (
        SELECT * FROM events e
        WHERE e.account_id = a.id AND e.name = n.name AND e.is_internal
        ORDER BY e.occurred_at DESC, e.seq DESC LIMIT 100) e
    ORDER BY e.occurred_at DESC, e.seq DESC, e.id DESC LIMIT 100) r;

INSERT INTO recent_flags (account_id, id, player_uuid, server_id, check_name, check_type,
                          flagged_at)
SELECT f.account_id, f.id, f.player_uuid, f.server_id, f.check_name, f.check_type, f.flagged_at
FROM accounts a
CROSS JOIN LATERAL (
    SELECT * FROM anticheat_flags f
    WHERE f.account_id = a.id
    ORDER BY f.flagged_at DESC, f.id DESC LIMIT 100) f;
