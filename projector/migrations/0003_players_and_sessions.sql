-- Players and their sessions (contract §7: player lookup, join history, playtime, staff).
-- Written only by the projector. Every effect is conditional on the current state (a newer
-- name is never overwritten by an older record, a closed session is never closed again), so
-- re-applying any part of the log changes nothing.
--
-- Each read model writes only its own tables, so any one of them can be rebuilt alone:
-- playtime and online status are therefore worked out at read time from sessions (one index
-- range per player), not kept as counters on players.

CREATE TABLE players (
    account_id              uuid        NOT NULL,
    uuid                    uuid        NOT NULL,
    -- Latest name seen, and when: a record older than username_at never overwrites it, so
    -- late batches cannot roll a rename back. NULL until a record carries a name.
    username                text,
    username_at             timestamptz,
    -- Log position (event seq) of the record that set username / rank / the link. "Newer" is
    -- (record time, log position): among records with the same time the later one in the log
    -- wins, and re-applying an earlier record (a replay) can never win again.
    username_seq            bigint,
    first_seen              timestamptz NOT NULL,
    last_seen               timestamptz NOT NULL,
    -- Current permission group from rank changes; a temporary group (rank_expires_at) falls
    -- back to previous_rank once it expires, which reads work out against now().
    rank                    text,
    previous_rank           text,
    rank_expires_at         timestamptz,
    rank_changed_at         timestamptz,
    rank_changed_seq        bigint,
    -- The linked chat-platform account (account-links); NULL when unlinked.
    linked_platform         text,
    linked_external_id      text,
    linked_external_name    text,
    -- Set by unlink too (with the fields above NULL), so an older link cannot come back.
    linked_at               timestamptz,
    linked_seq              bigint,
    PRIMARY KEY (account_id, uuid)
);

-- Staff detection reads players by rank within one account.
CREATE INDEX players_account_rank_idx ON players (account_id, rank) WHERE rank IS NOT NULL;

CREATE TABLE sessions (
    account_id      uuid        NOT NULL,
    -- The join record's event id: a join logged twice opens one session.
    id              uuid        NOT NULL,
    player_uuid     uuid        NOT NULL,
    server_id       uuid        NOT NULL,
    joined_at       timestamptz NOT NULL,
    left_at         timestamptz,
    -- How it ended: quit, switched (joined another server), server_offline (no heartbeat
    -- for 3 x the sync interval, or a graceful-shutdown heartbeat).
    closed_by       text        CHECK (closed_by IN ('quit', 'switched', 'server_offline')),
    client_version  text,
    -- Log position (event seq) of the join record. A quit, a switch or a heartbeat closes only
    -- sessions opened EARLIER in the log, so replaying it after a late join changes nothing.
    opened_seq      bigint      NOT NULL,
    -- Keyed hash of the player's IP (never the IP itself), for alt detection.
    ip_hash         text,
    PRIMARY KEY (account_id, id),
    CHECK (left_at IS NULL OR left_at >= joined_at)
);

-- Join history newest first for one player, without sorting the player's whole history.
CREATE INDEX sessions_player_time_idx ON sessions (account_id, player_uuid, joined_at DESC);
-- Open sessions, per server (closed when it goes offline) and per player (online status).
CREATE INDEX sessions_open_by_server_idx ON sessions (account_id, server_id) WHERE left_at IS NULL;
CREATE INDEX sessions_open_by_player_idx ON sessions (account_id, player_uuid) WHERE left_at IS NULL;
-- Alt detection: other players seen behind the same IP hash.
CREATE INDEX sessions_ip_hash_idx ON sessions (account_id, ip_hash) WHERE ip_hash IS NOT NULL;

-- The sessions model's own view of server liveness: the last heartbeat per server. A
-- heartbeat arriving more than 3 x the sync interval after the previous one closes the
-- sessions left open across the gap at that previous heartbeat. It duplicates
-- servers.last_heartbeat_at on purpose, so sessions never depends on another model's progress.
CREATE TABLE session_server_heartbeats (
    account_id         uuid        NOT NULL,
    server_id          uuid        NOT NULL,
    last_heartbeat_at  timestamptz NOT NULL,
    PRIMARY KEY (account_id, server_id)
);
