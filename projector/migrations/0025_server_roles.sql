-- What sends a server's heartbeats: a game server, or a proxy (Velocity, BungeeCord) in front
-- of the network's servers. A proxy's players are the same people its backends count, so the
-- dashboard's network figures (players online, the players chart) leave proxies out, while the
-- server list shows them with their role.
--
-- Like the other status fields, it is the latest heartbeat's (a heartbeat without a role is a
-- game server's). Rows from before this migration are game servers: no heartbeat could carry a
-- role then. Text with a CHECK, as the other enums of the read models.
ALTER TABLE servers
    ADD COLUMN role text NOT NULL DEFAULT 'server' CHECK (role IN ('server', 'proxy'));
