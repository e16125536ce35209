-- Account-wide dashboard reads (issue 15): player search, and the whole account's
-- punishments, flags and chat newest first with keyset paging.

-- Trigram indexes answer case-insensitive substring search (LIKE '%abc%') from an index.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- Player search: substring over lower(username) (trigram, needs 3+ characters) and prefix
-- (btree text_pattern_ops: LIKE 'abc%' on lower(username), any length).
CREATE INDEX players_username_trgm_idx ON players USING gin (lower(username) gin_trgm_ops)
    WHERE username IS NOT NULL;
CREATE INDEX players_username_prefix_idx ON players (account_id, lower(username) text_pattern_ops)
    WHERE username IS NOT NULL;
-- Search results and the player list come newest-seen first.
CREATE INDEX players_account_last_seen_idx ON players (account_id, last_seen DESC, uuid DESC);

-- The account's logs newest first: each page is one index range, like the per-player lists
-- (flags already have theirs: anticheat_flags_account_time_idx, 0012).
CREATE INDEX punishments_account_time_idx ON punishments (account_id, issued_at DESC, id DESC);
CREATE INDEX chat_messages_account_time_idx ON chat_messages (account_id, sent_at DESC, id DESC);
-- Chat keyword search (?q=): case-insensitive substring (ILIKE) over the message text. This
-- index costs the projector on every chat insert; the benchmark measures catch-up with and
-- without it.
CREATE INDEX chat_messages_message_trgm_idx ON chat_messages USING gin (message gin_trgm_ops);
