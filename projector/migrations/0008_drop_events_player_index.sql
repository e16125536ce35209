-- no-transaction
-- Replaced by events_account_player_time_incl_idx (same key, plus the columns funnels read).
DROP INDEX CONCURRENTLY IF EXISTS events_account_player_time_idx;
