-- Retention (issue 16): the UTC days each player was active, and per-cohort counts kept in step
-- with them, written by the active_days read model. "Active" means a record that needs the
-- player online: a session record (join or quit), a chat line or an anti-cheat flag, each on
-- the UTC day of its own time (the time of receipt when it has none). Punishments, rank
-- changes and account links are not activity: staff issue them to offline players too. A
-- session spanning midnight counts on the day it opened and the day it closed (and any day
-- with a chat line or flag between).
--
-- Every table is a function of the SET of (account, player, day) the log holds: days are
-- inserted ON CONFLICT DO NOTHING, first_day/last_day are a min/max, and the counts change
-- only by what a chunk newly adds (rows that reach 0 are deleted). So replaying any part of
-- the log changes nothing, and a rebuild ends with the same rows.

-- One row per player: their first and last active day. The first day is the player's cohort
-- (the model's own, not players.first_seen, so the model rebuilds on its own and a player
-- first met through a punishment joins a cohort only once they play).
CREATE TABLE player_activity (
    account_id  uuid NOT NULL,
    player_uuid uuid NOT NULL,
    first_day   date NOT NULL,
    last_day    date NOT NULL,
    PRIMARY KEY (account_id, player_uuid),
    CHECK (last_day >= first_day)
);

-- A cohort's players (the Retention page opens one): one index range.
CREATE INDEX player_activity_cohort_idx ON player_activity (account_id, first_day, player_uuid);

-- Every active day of every player: what the counts below are kept from.
CREATE TABLE player_active_days (
    account_id  uuid NOT NULL,
    player_uuid uuid NOT NULL,
    day         date NOT NULL,
    PRIMARY KEY (account_id, player_uuid, day)
);

-- How many players of the cohort of first_day were active on day first_day + day_number
-- (day_number 0: the cohort's size). "Returned on day N" for any range of cohorts is one
-- index range (day_number = N, first_day in the range) whatever the number of players: over
-- 1M players and 10M active days, a few hundred rows instead of a scan of millions.
CREATE TABLE cohort_returns (
    account_id  uuid    NOT NULL,
    day_number  integer NOT NULL,
    first_day   date    NOT NULL,
    players     bigint  NOT NULL,
    PRIMARY KEY (account_id, day_number, first_day)
);

-- How many players of the cohort of first_day were last active on first_day + span: "returned
-- on or after day N" is the players with span >= N, and the cohort's size their sum.
CREATE TABLE cohort_spans (
    account_id uuid    NOT NULL,
    first_day  date    NOT NULL,
    span       integer NOT NULL,
    players    bigint  NOT NULL,
    PRIMARY KEY (account_id, first_day, span)
);
