-- Servers: current status from heartbeats, and a TPS / player-count history kept raw for a
-- day and per minute after that (contract §5 heartbeat, §7 servers).

CREATE TABLE servers (
    account_id          uuid             NOT NULL,
    id                  uuid             NOT NULL,
    name                text,
    version             text,
    -- The last heartbeat's own flag (false after a graceful shutdown). Reads also treat a
    -- server as offline once no heartbeat came for 3 x the account's sync interval.
    online_flag         boolean          NOT NULL DEFAULT true,
    tps                 double precision,
    player_count        integer,
    max_players         integer,
    memory_used_mb      double precision,
    memory_max_mb       double precision,
    first_seen          timestamptz      NOT NULL,
    -- Only a newer heartbeat moves it: re-applied or late heartbeats change nothing.
    last_heartbeat_at   timestamptz      NOT NULL,
    -- Log position (event seq) of that heartbeat: breaks ties between equal timestamps (the
    -- later one in the log wins) so that re-applying an earlier heartbeat changes nothing.
    last_heartbeat_seq  bigint           NOT NULL,
    PRIMARY KEY (account_id, id)
);

-- Raw samples, one per heartbeat, kept for a day behind the server's latest heartbeat (the
-- projector deletes older rows, and never samples a heartbeat that old, so a replay cannot
-- insert a pruned sample again and count it twice in server_minutes).
CREATE TABLE server_samples (
    account_id    uuid             NOT NULL,
    server_id     uuid             NOT NULL,
    at            timestamptz      NOT NULL,
    tps           double precision NOT NULL,
    player_count  integer          NOT NULL,
    PRIMARY KEY (account_id, server_id, at)
);

-- Per-minute aggregates kept for good. Sums and counts (not averages) so a late sample folds
-- in exactly; the raw row's primary key guards against folding the same heartbeat twice.
CREATE TABLE server_minutes (
    account_id        uuid             NOT NULL,
    server_id         uuid             NOT NULL,
    minute            timestamptz      NOT NULL,
    samples           integer          NOT NULL,
    tps_sum           double precision NOT NULL,
    tps_min           double precision NOT NULL,
    player_count_sum  bigint           NOT NULL,
    player_count_max  integer          NOT NULL,
    PRIMARY KEY (account_id, server_id, minute)
);
