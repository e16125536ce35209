-- The staff dashboard's people: team members with a role per account, invites, sign-in
-- sessions, and the audit log of what was done through the dashboard and the admin API.
--
-- Written by query-api (the dashboard and the admin API), never by the projector; the projector
-- only applies the schema, like every other migration. Ids are UUIDv7 from the service.

-- One row per person who may sign in. A login is unique across the whole deployment (the sign-in
-- form asks for a login and a password, not an account), and is stored lower-cased so that
-- `Owner@Demo.local` and `owner@demo.local` are one person.
CREATE TABLE team_members (
    id            uuid PRIMARY KEY,
    -- No ON DELETE CASCADE: accounts are never deleted while anything hangs off them.
    account_id    uuid NOT NULL REFERENCES accounts (id),
    login         text NOT NULL UNIQUE
        CHECK (char_length(login) BETWEEN 3 AND 254 AND login = lower(login)),
    display_name  text NOT NULL CHECK (char_length(display_name) BETWEEN 1 AND 100),
    -- text with a CHECK rather than an enum type: adding a role is then one migration line, and
    -- the service's one permission function (`Role::allows`) is where roles mean something.
    role          text NOT NULL CHECK (role IN ('owner', 'admin', 'moderator', 'viewer')),
    -- A PHC string ($argon2id$v=19$...): algorithm, parameters and salt travel with the hash, so
    -- the parameters can be raised later without a migration.
    password_hash text NOT NULL CHECK (password_hash LIKE '$argon2id$%'),
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);

-- The team page lists an account's members, oldest first; "the last owner" is counted here too.
CREATE INDEX team_members_account ON team_members (account_id, created_at);

-- A single-use invitation: the link's token is shown once and only its SHA-256 is kept (256
-- random bits, so a fast unsalted hash is safe, as for API keys).
CREATE TABLE team_invites (
    id          uuid PRIMARY KEY,
    account_id  uuid NOT NULL REFERENCES accounts (id),
    login       text NOT NULL CHECK (char_length(login) BETWEEN 3 AND 254 AND login = lower(login)),
    role        text NOT NULL CHECK (role IN ('owner', 'admin', 'moderator', 'viewer')),
    token_hash  text NOT NULL UNIQUE CHECK (token_hash ~ '^[0-9a-f]{64}$'),
    -- Who invited (NULL: the operator's admin key or the command line). No foreign key: the
    -- inviter may be removed later and the invite's history stays readable.
    invited_by  uuid,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    -- Set once, by the accepting transaction; an accepted invite never works again.
    accepted_at timestamptz,
    -- Set when an owner or admin withdraws it before use.
    revoked_at  timestamptz
);

CREATE INDEX team_invites_account ON team_invites (account_id, created_at);

-- A signed-in browser. The cookie holds a 256-bit random token; only its SHA-256 is stored, so
-- a leaked table cannot be replayed. Removing a member removes its sessions in the same
-- statement (ON DELETE CASCADE), and every request looks its session up here: a removed
-- member's next request is refused.
CREATE TABLE team_sessions (
    token_hash   text PRIMARY KEY CHECK (token_hash ~ '^[0-9a-f]{64}$'),
    member_id    uuid NOT NULL REFERENCES team_members (id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL DEFAULT now(),
    -- The idle expiry counts from here; refreshed by requests (at most once a minute).
    last_seen_at timestamptz NOT NULL DEFAULT now(),
    -- The absolute expiry: fixed at sign-in, never extended.
    expires_at   timestamptz NOT NULL
);

-- "End all of a member's sessions" (password change, role change, removal).
CREATE INDEX team_sessions_member ON team_sessions (member_id);

-- What people (and the operator) did. Append-only from the service's side.
CREATE TABLE audit_log (
    id              uuid PRIMARY KEY,
    -- NULL only for a failed sign-in with a login nobody has: it belongs to no account.
    account_id      uuid REFERENCES accounts (id),
    -- The member who acted, when a member did. No foreign key: the log outlives removals.
    actor_member_id uuid,
    -- Who acted, as shown: a member's login, 'admin key', 'command line', or the login tried.
    actor           text NOT NULL CHECK (char_length(actor) BETWEEN 1 AND 254),
    -- e.g. 'sign_in', 'sign_in_failed', 'member_invited', 'member_role_changed'.
    action          text NOT NULL CHECK (action ~ '^[a-z_]{1,64}$'),
    -- What was acted on (a member's login, a key's id), when anything.
    target          text CHECK (target IS NULL OR char_length(target) <= 254),
    detail          jsonb NOT NULL DEFAULT '{}'::jsonb,
    -- HMAC of the client's IP (the IpHasher with IP_HASH_KEY): lets "same address" be seen
    -- without ever storing an address.
    ip_hash         text,
    at              timestamptz NOT NULL DEFAULT now()
);

-- The audit page reads an account's log newest first, a page at a time, keyed on the id: ids
-- are UUIDv7, so they sort by the time they were made, and a keyset on one unique column needs
-- no tie-break.
CREATE INDEX audit_log_account_newest ON audit_log (account_id, id DESC);
