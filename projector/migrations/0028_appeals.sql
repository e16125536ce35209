-- Appeals of punishments, sent from the public appeal form, and the steps staff took on them
-- (the projector's `appeals` model, from `appeal` records). One appeal per punishment: a
-- second one sent for the same punishment is not stored.
CREATE TABLE appeals (
    account_id    uuid        NOT NULL,
    id            uuid        NOT NULL,
    punishment_id uuid        NOT NULL,
    player_uuid   uuid        NOT NULL,
    -- The player's words.
    message       text        NOT NULL,
    -- new, under_review, accepted or denied: the latest step.
    status        text        NOT NULL,
    submitted_at  timestamptz NOT NULL,
    -- When the latest step was taken, and the member who took it (null while new).
    updated_at    timestamptz NOT NULL,
    member_id     uuid,
    member_name   text,
    -- Staff's words to the player, shown at the appeal's link.
    reply         text,
    -- The revoke action written with an acceptance.
    revoke_action uuid,
    -- The latest step's place in the log: a replay applies each step once, in order.
    seq           bigint      NOT NULL,
    PRIMARY KEY (account_id, id),
    UNIQUE (account_id, punishment_id)
);

-- The inbox: an account's appeals of one status, newest first.
CREATE INDEX appeals_inbox ON appeals (account_id, status, submitted_at DESC);
