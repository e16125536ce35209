-- Punishments issued on the dashboard (the `action` record kind) happened on no server: their
-- server is NULL, and the pages show them as issued from the dashboard.
ALTER TABLE punishments ALTER COLUMN server_id DROP NOT NULL;
