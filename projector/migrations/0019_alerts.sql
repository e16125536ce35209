-- Alerts and signed webhooks (issue 17). Written by query-api (destinations, rules, "send
-- again", test events) and by the notifier (`projector notify`): a consumer of the event log
-- with its own checkpoint, which writes each notification to the outbox
-- (`alert_deliveries`) in the transaction that advances that checkpoint, and delivery
-- workers that send the outbox with retries. No read model writes these tables, and a
-- rebuild of the read models never touches them, so a rebuild never sends anything again.

-- Where notifications go: a generic webhook signed per the Standard Webhooks specification,
-- or a Discord webhook.
CREATE TABLE alert_destinations (
    id                   uuid        PRIMARY KEY,
    account_id           uuid        NOT NULL REFERENCES accounts (id),
    kind                 text        NOT NULL CHECK (kind IN ('webhook', 'discord')),
    -- A label for people (defaults to the URL's host).
    name                 text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
    url                  text        NOT NULL CHECK (char_length(url) BETWEEN 1 AND 2048),
    -- The signing secret (`whsec_` + base64 of 32 random bytes; webhooks only), sealed with
    -- WEBHOOK_SECRETS_KEY (shared::alerts::sealing): a database dump alone cannot sign.
    secret_sealed        bytea,
    -- After a rotation the old secret keeps signing too (two signatures per message) until
    -- it expires, so a receiver can switch without dropping messages.
    previous_secret_sealed bytea,
    previous_secret_expires_at timestamptz,
    -- A destination failing for days is disabled by the notifier (disabled_reason says why)
    -- and its owners are told on the dashboard; an admin enables it again.
    enabled              boolean     NOT NULL DEFAULT true,
    disabled_at          timestamptz,
    disabled_reason      text,
    -- Start of the current run of failed attempts (NULL after a success).
    failing_since        timestamptz,
    last_success_at      timestamptz,
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now(),
    CHECK ((kind = 'webhook') = (secret_sealed IS NOT NULL))
);

CREATE INDEX alert_destinations_account_idx ON alert_destinations (account_id, created_at, id);

-- What to notify about: `kind` plus its parameters (shared::alerts::RuleSpec, stored as the
-- JSON the API accepts, without `destinations`).
CREATE TABLE alert_rules (
    id          uuid        PRIMARY KEY,
    account_id  uuid        NOT NULL REFERENCES accounts (id),
    kind        text        NOT NULL CHECK (char_length(kind) BETWEEN 1 AND 64),
    name        text        CHECK (name IS NULL OR char_length(name) BETWEEN 1 AND 100),
    spec        jsonb       NOT NULL,
    enabled     boolean     NOT NULL DEFAULT true,
    -- A rule matches only what was received from this moment on (never the past).
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX alert_rules_account_idx ON alert_rules (account_id, created_at, id);

-- Each rule names one or more destinations of its own account.
CREATE TABLE alert_rule_destinations (
    rule_id        uuid NOT NULL REFERENCES alert_rules (id) ON DELETE CASCADE,
    destination_id uuid NOT NULL REFERENCES alert_destinations (id) ON DELETE CASCADE,
    PRIMARY KEY (rule_id, destination_id)
);

CREATE INDEX alert_rule_destinations_destination_idx ON alert_rule_destinations (destination_id);

-- The outbox: one row per notification and destination. `id` is the message id sent as
-- `webhook-id` ("msg_" + its simple form) on every attempt, so receivers can drop repeats.
CREATE TABLE alert_deliveries (
    id               uuid        PRIMARY KEY,
    account_id       uuid        NOT NULL,
    destination_id   uuid        NOT NULL REFERENCES alert_destinations (id) ON DELETE CASCADE,
    -- NULL for a test event, or after the rule was deleted.
    rule_id          uuid        REFERENCES alert_rules (id) ON DELETE SET NULL,
    -- `punishment.issued`, `server.offline`, ..., `test` (shared::alerts::EventType).
    event_type       text        NOT NULL CHECK (char_length(event_type) BETWEEN 1 AND 64),
    -- The message body's `data` (shared::alerts::Notification), as sent.
    payload          jsonb       NOT NULL,
    -- When what it reports happened.
    occurred_at      timestamptz NOT NULL,
    -- The log message that caused it (NULL for the clock's rules and for test events).
    source_sequence  bigint,
    status           text        NOT NULL DEFAULT 'pending'
                                 CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts         integer     NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz NOT NULL DEFAULT now(),
    -- A worker's lease on an attempt in flight; a worker killed mid-attempt leaves it to
    -- expire and the delivery is tried again, with the same id.
    locked_until     timestamptz,
    last_attempt_at  timestamptz,
    last_status_code integer,
    last_duration_ms integer,
    last_error       text,
    delivered_at     timestamptz,
    -- Retried (exponential backoff with jitter) until this moment, then `failed`; "send
    -- again" moves it 26 hours on.
    give_up_at       timestamptz NOT NULL DEFAULT now() + interval '26 hours',
    created_at       timestamptz NOT NULL DEFAULT now()
);

-- What the workers claim next.
CREATE INDEX alert_deliveries_due_idx ON alert_deliveries (next_attempt_at)
    WHERE status = 'pending';
-- A destination's delivery log, newest first, keyset-paged.
CREATE INDEX alert_deliveries_destination_idx
    ON alert_deliveries (destination_id, created_at DESC, id DESC);

-- Every attempt, for the delivery log's detail.
CREATE TABLE alert_delivery_attempts (
    delivery_id  uuid        NOT NULL REFERENCES alert_deliveries (id) ON DELETE CASCADE,
    attempt      integer     NOT NULL,
    attempted_at timestamptz NOT NULL,
    status_code  integer,
    duration_ms  integer     NOT NULL,
    error        text,
    PRIMARY KEY (delivery_id, attempt)
);

-- The notifier's position in the event log (one row per stream); moved in the transaction
-- that writes the notifications it covers.
CREATE TABLE notifier_checkpoints (
    stream        text        PRIMARY KEY,
    last_sequence bigint      NOT NULL CHECK (last_sequence >= 0),
    updated_at    timestamptz NOT NULL DEFAULT now()
);

-- The notifier's own memory for rules that span several records or the clock, changed in the
-- same transactions as its checkpoint:
-- recent anti-cheat flags per player (pruned past the longest window),
CREATE TABLE alert_recent_flags (
    account_id   uuid        NOT NULL,
    player_uuid  uuid        NOT NULL,
    flagged_at   timestamptz NOT NULL,
    check_name   text        NOT NULL,
    seq          bigint      NOT NULL,
    PRIMARY KEY (account_id, player_uuid, seq)
);

CREATE INDEX alert_recent_flags_time_idx ON alert_recent_flags (flagged_at);

-- each server's heartbeats as the notifier saw them (offline, back online, low TPS),
CREATE TABLE alert_servers (
    account_id        uuid        NOT NULL,
    server_id         uuid        NOT NULL,
    name              text,
    last_heartbeat_at timestamptz NOT NULL,
    last_tps          double precision,
    -- Set when it was declared offline (no heartbeat for 3 sync intervals, or it said so).
    offline_since     timestamptz,
    -- First heartbeat of the current run under some rule's TPS threshold is kept per rule in
    -- alert_rule_state.
    PRIMARY KEY (account_id, server_id)
);

-- and per rule and subject (a server, a player) what has fired: a rule fires once per spell
-- (a flag burst, a low-TPS spell) until the condition clears.
CREATE TABLE alert_rule_state (
    rule_id   uuid        NOT NULL REFERENCES alert_rules (id) ON DELETE CASCADE,
    subject   text        NOT NULL,
    since     timestamptz NOT NULL,
    fired_at  timestamptz,
    PRIMARY KEY (rule_id, subject)
);
