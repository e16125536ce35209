# shellcheck shell=bash
# shellcheck disable=SC2034  # the THROWAWAY_ names are read by the scripts that source this file
# A throw-away nats-server and database for one script's private stack (the fuzzer, the plugin's
# contract test): free loopback ports, everything under the script's own directory, nothing of
# .local/ touched. Sourced after deploy/lib.sh. The functions set globals rather than print, so
# call them directly (never in $(...)); throwaway_cleanup undoes whatever was started.

THROWAWAY_NATS_PID=""
THROWAWAY_NATS_PORT=""
THROWAWAY_DB_NAME=""
THROWAWAY_PG_DATA=""
THROWAWAY_DATABASE_URL=""

# throwaway_nats DIR LOG: a nats-server with JetStream storing under DIR, logging to LOG; returns
# once it accepts connections. Sets THROWAWAY_NATS_PORT and THROWAWAY_NATS_PID.
throwaway_nats() {
    local dir="$1" log_file="$2" i
    THROWAWAY_NATS_PORT="$(free_port)"
    mkdir -p "$dir/store"
    cat >"$dir/nats.conf" <<CONF
listen: 127.0.0.1:$THROWAWAY_NATS_PORT
max_payload: 8MB
jetstream { store_dir: "$dir/store" }
CONF
    log "starting nats-server on 127.0.0.1:$THROWAWAY_NATS_PORT"
    "$NATS_BIN" -c "$dir/nats.conf" </dev/null >"$log_file" 2>&1 &
    THROWAWAY_NATS_PID=$!
    for ((i = 0; i < 100; i++)); do
        (exec 3<>"/dev/tcp/127.0.0.1/$THROWAWAY_NATS_PORT") 2>/dev/null && return 0
        pid_alive "$THROWAWAY_NATS_PID" || die "nats-server exited: $(tail -n 5 "$log_file")"
        sleep 0.1
    done
    die "nats-server did not accept connections on port $THROWAWAY_NATS_PORT: $(tail -n 5 "$log_file")"
}

# throwaway_database WORK PREFIX: a database named PREFIX_<random> in TEST_DATABASE_URL's
# cluster when that is set (deploy/test.sh's), else a PostgreSQL cluster of its own under
# WORK/pg. Sets THROWAWAY_DATABASE_URL.
throwaway_database() {
    local work="$1" prefix="$2" pg_port
    if [[ -n "${TEST_DATABASE_URL:-}" ]]; then
        [[ "$TEST_DATABASE_URL" != *\?* ]] || die "TEST_DATABASE_URL with query parameters is not supported here"
        THROWAWAY_DB_NAME="${prefix}_$(random_hex 6)"
        log "creating database $THROWAWAY_DB_NAME in TEST_DATABASE_URL's cluster"
        "$PG_BIN/psql" "$TEST_DATABASE_URL" -qAtc "CREATE DATABASE $THROWAWAY_DB_NAME" >/dev/null
        THROWAWAY_DATABASE_URL="${TEST_DATABASE_URL%/*}/$THROWAWAY_DB_NAME"
    else
        mkdir -p "$work/pg"
        pg_own_dir "$work"
        THROWAWAY_PG_DATA="$work/pg/data"
        pg_init "$THROWAWAY_PG_DATA"
        pg_port="$(free_port)"
        pg_start "$THROWAWAY_PG_DATA" "$work/pg/run" "$pg_port" "$work/pg/postgres.log" \
            "fsync = off" "synchronous_commit = off" "max_connections = 100"
        pg_ensure_db "$pg_port" warden
        THROWAWAY_DATABASE_URL="postgres://postgres@127.0.0.1:$pg_port/warden"
    fi
}

# throwaway_cleanup: stops the nats-server, drops the database or stops the cluster.
throwaway_cleanup() {
    if [[ -n "$THROWAWAY_NATS_PID" ]]; then stop_pid "$THROWAWAY_NATS_PID" "throw-away nats-server" 15; fi
    THROWAWAY_NATS_PID=""
    if [[ -n "$THROWAWAY_DB_NAME" ]]; then
        "$PG_BIN/psql" "$TEST_DATABASE_URL" -qAtc "DROP DATABASE IF EXISTS $THROWAWAY_DB_NAME WITH (FORCE)" >/dev/null ||
            warn "could not drop database $THROWAWAY_DB_NAME"
        THROWAWAY_DB_NAME=""
    fi
    if [[ -n "$THROWAWAY_PG_DATA" ]]; then
        pg_stop "$THROWAWAY_PG_DATA" immediate || true
        THROWAWAY_PG_DATA=""
    fi
}
