-- Retention per kind (issue 18): the projector's sweeper (projector::retention) removes, per
-- account, the rows older than the account's cutoff, 10k rows per statement, every
-- RETENTION_SWEEP_SECS. Each sweep asks "this account's rows of this kind before this time",
-- which needs an index that starts with (account_id, time); without one every sweep reads
-- the whole table. Chat (chat_messages_account_time_idx, 0013) and anti-cheat flags
-- (anticheat_flags_account_time_idx, 0012) have one already, and the timeline finds chat,
-- session and custom events by name (events_account_name_time_idx). Sessions had none.
--
-- Not CONCURRENTLY: the projector applies its migrations before it consumes, so nothing
-- writes sessions meanwhile (an older leader still running waits; readers are not blocked by
-- CREATE INDEX), and one transaction keeps this file all-or-nothing.

-- Sessions are deleted by joined_at (closed ones only: an open session is still "online").
CREATE INDEX sessions_account_time_idx ON sessions (account_id, joined_at);

-- IP hashes are blanked while the sessions stay: partial, so a blanked session leaves the
-- index and later sweeps read only the hashes still to blank, however long sessions are kept.
CREATE INDEX sessions_ip_hash_time_idx ON sessions (account_id, joined_at)
    WHERE ip_hash IS NOT NULL;
