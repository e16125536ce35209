-- Keyword and player search (issue 15) choose their plan from the planner's estimate of how
-- many rows a LIKE pattern matches: walk the newest rows when it is frequent, go through the
-- trigram or prefix index when it is rare. With the default statistics (a histogram of 101
-- sampled values) a fragment found in none of them is guessed at about 0.01% of the rows, so
-- fragments in 1-3% of the rows were taken for rare (README, Benchmarks, "Search"):
-- - chat: a phrase of common words in 0.7% of 5M lines ("lag help") went through the trigram
--   index and rechecked 1.8M lines, 2.4 s; with 1,000 sampled lines it walks
--   chat_messages_account_time_idx, 32 ms;
-- - players: fragments in 2.5% of 1.3M names ("fox", "wal") were estimated at 1,251-1,771
--   names, under query-api's walk threshold (2,000), and sorted 32k matches, 0.4-0.7 s per
--   search; with 1,000 sampled names the estimates are 30-37k, every fragment under 15 ms.
-- ANALYZE then samples 300k rows instead of 30k (about 2 s on 5M chat lines); planning such a
-- query takes about 2.5 ms.
ALTER TABLE chat_messages ALTER COLUMN message SET STATISTICS 1000;
-- The expression lower(name) of both name indexes (0014): its statistics are the index's.
ALTER INDEX player_names_prefix_idx ALTER COLUMN 2 SET STATISTICS 1000;
ALTER INDEX player_names_trgm_idx ALTER COLUMN 1 SET STATISTICS 1000;
