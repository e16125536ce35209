-- Where the dashboard's actions were applied: one row per action and server, from the
-- servers' `action_ack` records (the projector's `action_deliveries` model). A server may
-- acknowledge an action more than once (delivery is at least once): the row holds the outcome
-- latest in the log. The punishment rows of the Investigate page list the servers whose outcome
-- is `applied` (a dashboard action's punishment has the action's id).
CREATE TABLE action_deliveries (
    account_id uuid        NOT NULL,
    action_id  uuid        NOT NULL,
    server_id  uuid        NOT NULL,
    -- applied, not_online, skipped or failed (ingest refuses anything else).
    outcome    text        NOT NULL,
    detail     text,
    -- When the server acted.
    at         timestamptz NOT NULL,
    -- The ack's place on the timeline (stream sequence * 1000 + index).
    seq        bigint      NOT NULL,
    PRIMARY KEY (account_id, action_id, server_id)
);
