-- Player search by a fragment of any name (issue 15), through one trigram index on players.
--
-- Until now a rare fragment went through player_names' trigram index and then joined every
-- match back to players to sort them by last_seen: for a fragment in ~0.05% of 1.3M names
-- ("darkhunter", ~800 players) that is ~800 heap visits in player_names plus ~800 index
-- lookups in players, 30-45 ms. Indexing the joined names of each player row instead reads
-- only the players' own rows (one bitmap heap scan, then a top-N sort): 9-20 ms on the same
-- data (README, Benchmarks, "Search").
--
-- The names are joined by a newline, which no name holds and no pattern can match across
-- (patterns come from PlayerSearch::parse, one fragment of one name), lower-cased like the
-- patterns. array_to_string is only STABLE in PostgreSQL's catalog (it formats any element
-- type), so the expression is wrapped in a function declared IMMUTABLE, which is true for
-- text[]; query-api writes the same call so the planner matches the index.
CREATE FUNCTION player_names_text(names text[]) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN lower(array_to_string(names, E'\n'));

CREATE INDEX players_names_trgm_idx ON players USING gin (player_names_text(names) gin_trgm_ops);
-- Its statistics choose between this index and the walk of the newest players (see 0016).
ALTER INDEX players_names_trgm_idx ALTER COLUMN 1 SET STATISTICS 1000;

-- Replaced: the current name is one of `names`, and every past name is too. Each players
-- write updates every index of the table, so the old ones would cost every record for nothing.
DROP INDEX players_username_trgm_idx;
DROP INDEX player_names_trgm_idx;
