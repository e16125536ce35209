#!/usr/bin/env bash
# Stops what deploy/up.sh started: the demo fleet, the stack process, the private nats-server
# and the private PostgreSQL. Data stays under .local/ for the next ./deploy/up.sh.
set -euo pipefail

# shellcheck source=deploy/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$REPO_ROOT"

# The fleet first, while the stack can still take its goodbye (quits, offline heartbeats); then
# the stack, so it does not log a burst of connection errors while its servers go away.
stop_fleet
stop_stack
stop_nats
if [[ -f "$PG_DATA/postmaster.pid" ]]; then
    if PG_BIN="$(find_pg_bin)"; then
        pg_stop "$PG_DATA" fast
    else
        warn "$PG_DATA/postmaster.pid exists but no PostgreSQL binaries were found"
    fi
fi
log "stopped; data is kept under $LOCAL_DIR"
