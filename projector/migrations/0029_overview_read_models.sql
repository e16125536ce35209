-- The Overview's small reads.
--
-- network_five_minutes: the network chart's read model (servers model). Per account and
-- five-minute bucket, the players online across its game servers: each server's average over
-- the bucket (server_five_minutes), summed, proxies left out; NULL when only proxies reported.
-- The projector recomputes a bucket's row in the transaction that folds its heartbeats, and
-- prunes rows with the five-minute rollup's retention. Filled here from the rollup as it is.
CREATE TABLE network_five_minutes (
    account_id uuid NOT NULL,
    bucket timestamptz NOT NULL,
    players float8,
    PRIMARY KEY (account_id, bucket)
);

INSERT INTO network_five_minutes (account_id, bucket, players)
SELECT f.account_id, f.bucket,
       sum(f.player_count_sum::float8 / f.samples) FILTER (WHERE s.role IS DISTINCT FROM 'proxy')
FROM server_five_minutes f
LEFT JOIN servers s ON s.account_id = f.account_id AND s.id = f.server_id
GROUP BY f.account_id, f.bucket;

-- The staff roster's members by rank: the effective group (rank, or previous_rank once a
-- temporary rank expired) compared case-insensitively, one index range per case instead of a
-- scan of every player of the account. The key is the group's first 100 characters (the
-- roster rechecks the whole name), so these indexes never refuse a rank players_account_rank_idx
-- takes.
CREATE INDEX players_account_lower_rank_idx ON players (account_id, lower(left(rank, 100)))
    WHERE rank IS NOT NULL;
CREATE INDEX players_account_lower_previous_rank_idx
    ON players (account_id, lower(left(previous_rank, 100)))
    WHERE rank_expires_at IS NOT NULL;
