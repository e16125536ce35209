-- Server history for the dashboard's charts (Overview, Servers): min / avg / max of TPS and
-- player count per server at three resolutions, so no chart reads more than a few thousand
-- rows however long the history is.
--
--   server_minutes       1 minute    kept 8 days   1 h and 24 h charts, spells over 7 days
--   server_five_minutes  5 minutes   kept 8 days   the 24 h network chart, the 7 d chart
--   server_hours         1 hour      kept 400 days the 30 d chart (and anything longer)
--
-- All three are folded in the same statement from exactly the raw samples it inserted
-- (server_samples' primary key), so a heartbeat logged or applied twice counts once in each.
-- Retention is measured behind each server's latest heartbeat (the data's own time), like the
-- raw samples: the projector never samples a heartbeat more than a day older than that, so a
-- pruned rollup row can never be folded into again by a replay.

-- The minute rows gain the two extremes they lacked. Rows folded before this migration get
-- their average (the best we know without the raw samples, which exist only for the last day:
-- those are used where they exist); `projector rebuild --model servers` recomputes every row.
ALTER TABLE server_minutes
    ADD COLUMN tps_max           double precision,
    ADD COLUMN player_count_min  integer;

UPDATE server_minutes m
SET tps_max = s.tps_max, player_count_min = s.player_count_min
FROM (SELECT account_id, server_id, date_trunc('minute', at, 'UTC') AS minute,
             max(tps) AS tps_max, min(player_count) AS player_count_min
      FROM server_samples GROUP BY 1, 2, 3) s
WHERE m.account_id = s.account_id AND m.server_id = s.server_id AND m.minute = s.minute;

UPDATE server_minutes
SET tps_max = tps_sum / samples, player_count_min = (player_count_sum / samples)::int4
WHERE tps_max IS NULL;

ALTER TABLE server_minutes
    ALTER COLUMN tps_max SET NOT NULL,
    ALTER COLUMN player_count_min SET NOT NULL;

-- Sums and counts (not averages), as in server_minutes, so late samples fold in exactly.
CREATE TABLE server_five_minutes (
    account_id        uuid             NOT NULL,
    server_id         uuid             NOT NULL,
    -- Start of the 5-minute bucket (UTC, aligned to the hour).
    bucket            timestamptz      NOT NULL,
    samples           integer          NOT NULL,
    tps_sum           double precision NOT NULL,
    tps_min           double precision NOT NULL,
    tps_max           double precision NOT NULL,
    player_count_sum  bigint           NOT NULL,
    player_count_min  integer          NOT NULL,
    player_count_max  integer          NOT NULL,
    PRIMARY KEY (account_id, server_id, bucket)
);

-- The Overview sums every server's players per bucket over the last 24 h: one index-only
-- range scan per account (100 servers x 288 buckets), not one probe per server.
CREATE INDEX server_five_minutes_account_bucket_idx
    ON server_five_minutes (account_id, bucket) INCLUDE (samples, player_count_sum);

CREATE TABLE server_hours (
    account_id        uuid             NOT NULL,
    server_id         uuid             NOT NULL,
    -- Start of the hour (UTC).
    hour              timestamptz      NOT NULL,
    samples           integer          NOT NULL,
    -- Minutes of the hour with at least one heartbeat: 60 for an hour fully up.
    online_minutes    integer          NOT NULL,
    tps_sum           double precision NOT NULL,
    tps_min           double precision NOT NULL,
    tps_max           double precision NOT NULL,
    player_count_sum  bigint           NOT NULL,
    player_count_min  integer          NOT NULL,
    player_count_max  integer          NOT NULL,
    PRIMARY KEY (account_id, server_id, hour),
    CHECK (online_minutes BETWEEN 0 AND 60)
);

-- Backfill the new rollups from the minute rows kept so far.
INSERT INTO server_five_minutes
SELECT account_id, server_id, date_bin('5 minutes', minute, timestamptz '2000-01-01 00:00:00+00'),
       sum(samples)::int4, sum(tps_sum), min(tps_min), max(tps_max), sum(player_count_sum),
       min(player_count_min), max(player_count_max)
FROM server_minutes GROUP BY 1, 2, 3;

INSERT INTO server_hours
SELECT account_id, server_id, date_trunc('hour', minute, 'UTC'), sum(samples)::int4,
       count(*)::int4, sum(tps_sum), min(tps_min), max(tps_max), sum(player_count_sum),
       min(player_count_min), max(player_count_max)
FROM server_minutes GROUP BY 1, 2, 3;

-- The Overview's activity list merges the newest anti-cheat flags of the account with the
-- newest timeline events; flags had an index per player only.
CREATE INDEX anticheat_flags_account_time_idx
    ON anticheat_flags (account_id, flagged_at DESC, id DESC);
