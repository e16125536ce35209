#!/usr/bin/env bash
# Starts the local stack: a private nats-server and PostgreSQL under .local/ (unless NATS_URL /
# DATABASE_URL are set), the all-in-one `stack` binary, and a demo account with one plugin and one
# dashboard key, written to .local/stack.env.
#
#   ./deploy/up.sh [--detach] [--demo] [--infra-only] [--debug]
#
#   --detach      return once everything answers its readiness check (default: stay in the
#                 foreground tailing the log; Ctrl-C stops everything like deploy/down.sh)
#   --demo        also start the demo fleet (target/release/demo-fleet): simulated game servers
#                 writing to the demo account with its plugin key, so the dashboard comes alive
#                 (log: .local/logs/demo-fleet.log; ./deploy/down.sh stops it); its first start
#                 for an account backfills 30 days of history (FLEET_HISTORY_DAYS, 0: none)
#   --infra-only  start only nats-server and PostgreSQL (for running services with cargo run);
#                 implies --detach
#   --debug       run the debug build (what ./deploy/test.sh builds) instead of a release build
#
# Environment: NATS_URL, DATABASE_URL (use these instead of private servers), NATS_PORT, PG_PORT,
# HTTP_PORT (override the remembered ports), RUST_LOG (default info), LOG_FORMAT (default pretty),
# PLUGIN_IN_UP=0 (do not build the game-server plugin's jar for the dashboard's Connect page),
# WARDEN_HOME (keep this stack's data, ports, secrets and logs there instead of .local/, so a
# second stack runs beside the first; ./deploy/down.sh stops it with the same WARDEN_HOME).
set -euo pipefail

# shellcheck source=deploy/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$REPO_ROOT"

READY_TIMEOUT=120
detach=false
demo=false
infra_only=false
profile=release
for arg in "$@"; do
    case "$arg" in
    --detach) detach=true ;;
    --demo) demo=true ;;
    --infra-only)
        infra_only=true
        detach=true
        ;;
    --debug) profile=debug ;;
    -h | --help)
        sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
        exit 0
        ;;
    *) die "unknown argument: $arg (see --help)" ;;
    esac
done

mkdir -p "$LOCAL_DIR" "$LOG_DIR"
command -v curl >/dev/null 2>&1 || apt_install curl ca-certificates
require_python

section "servers"
choose_ports
if [[ -n "${NATS_URL:-}" ]]; then
    log "using NATS_URL from the environment"
else
    ensure_nats_installed
    start_nats
    NATS_URL="nats://127.0.0.1:$NATS_PORT"
fi
if [[ -n "${DATABASE_URL:-}" ]]; then
    log "using DATABASE_URL from the environment"
else
    ensure_postgres_installed
    mkdir -p "$PG_DIR"
    pg_own_dir "$PG_DIR"
    pg_init "$PG_DATA"
    pg_start "$PG_DATA" "$PG_RUN" "$PG_PORT" "$PG_LOG"
    pg_ensure_db "$PG_PORT" "$PG_DB_NAME"
    DATABASE_URL="postgres://postgres@127.0.0.1:$PG_PORT/$PG_DB_NAME"
fi
export NATS_URL DATABASE_URL

if [[ "$infra_only" == true ]]; then
    cat <<EOF

nats-server and PostgreSQL are up (stop them with ./deploy/down.sh):
  export NATS_URL=$NATS_URL
  export DATABASE_URL=$DATABASE_URL
logs: $NATS_LOG, $PG_LOG
EOF
    exit 0
fi

ensure_secrets
BASE_URL="http://127.0.0.1:$HTTP_PORT"

section "build"
packages=(-p stack)
[[ "$demo" == true ]] && packages+=(-p demo-fleet)
if [[ "$profile" == release ]]; then
    cargo build --release "${packages[@]}"
else
    cargo build "${packages[@]}"
fi
STACK_BIN="${CARGO_TARGET_DIR:-$REPO_ROOT/target}/$profile/stack"
FLEET_BIN="${CARGO_TARGET_DIR:-$REPO_ROOT/target}/$profile/demo-fleet"
[[ -x "$STACK_BIN" ]] || die "cargo build succeeded but $STACK_BIN does not exist"
if [[ "$demo" == true && ! -x "$FLEET_BIN" ]]; then
    die "cargo build succeeded but $FLEET_BIN does not exist"
fi
# The game-server plugin's jar, offered for download on the dashboard's Connect page. Without it
# (no Java, Maven Central unreachable) the stack still starts and the page says how to build it.
PLUGIN_JAR=""
if [[ "${PLUGIN_IN_UP:-1}" != 0 ]]; then
    log "building the game-server plugin (log: $LOG_DIR/plugin-build.log)"
    if jar_path="$(./deploy/plugin.sh --skip-tests 2>"$LOG_DIR/plugin-build.log" | tail -n 1)" &&
        [[ -f "$jar_path" ]]; then
        PLUGIN_JAR="$jar_path"
        log "plugin jar: $PLUGIN_JAR"
    else
        log "warning: the plugin did not build (see $LOG_DIR/plugin-build.log); the Connect page offers no jar"
    fi
fi

section "stack"
# A fleet from an earlier start would write to the stack while it restarts.
stop_fleet
stop_stack
log "starting $STACK_BIN on $BASE_URL (log: $STACK_LOG)"
printf '\n----- %s deploy/up.sh starting stack -----\n' "$(date -u +%FT%TZ)" >>"$STACK_LOG"
# WEBHOOK_ALLOW_NETWORKS=loopback: alert destinations may be a receiver on this machine
# (http://127.0.0.1:PORT/...), which a production deployment refuses (docs/configuration.md).
WEBHOOK_ALLOW_NETWORKS="${WEBHOOK_ALLOW_NETWORKS:-loopback}"
BIND_ADDR="127.0.0.1:$HTTP_PORT" ADMIN_KEY="$ADMIN_KEY" IP_HASH_KEY="$IP_HASH_KEY" \
    WEBHOOK_SECRETS_KEY="$WEBHOOK_SECRETS_KEY" WEBHOOK_ALLOW_NETWORKS="$WEBHOOK_ALLOW_NETWORKS" \
    PRIVACY_MASTER_KEY="$PRIVACY_MASTER_KEY" PLUGIN_JAR="$PLUGIN_JAR" PLUGIN_BASE_URL="$BASE_URL" \
    LOG_FORMAT="${LOG_FORMAT:-pretty}" RUST_LOG="${RUST_LOG:-info}" \
    setsid "$STACK_BIN" </dev/null >>"$STACK_LOG" 2>&1 &
stack_pid=$!
echo "$stack_pid" >"$STACK_PID"

log "waiting up to ${READY_TIMEOUT}s for $BASE_URL/readyz"
ready=false
for ((i = 0; i < READY_TIMEOUT * 4; i++)); do
    if [[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$BASE_URL/readyz" || true)" == "200" ]]; then
        ready=true
        break
    fi
    pid_alive "$stack_pid" || break
    sleep 0.25
done
if [[ "$ready" != true ]]; then
    tail -n 40 "$STACK_LOG" >&2 || true
    if pid_alive "$stack_pid"; then
        stop_stack
        die "the stack did not become ready within ${READY_TIMEOUT}s (log: $STACK_LOG); nats-server and PostgreSQL are still running: ./deploy/down.sh stops them"
    fi
    rm -f "$STACK_PID"
    die "the stack exited during start-up (log: $STACK_LOG); nats-server and PostgreSQL are still running: ./deploy/down.sh stops them"
fi

# --- demo account ---------------------------------------------------------------------------

# admin_api METHOD PATH [BODY]: prints the response body; fails unless the status is 2xx.
admin_api() {
    local method="$1" path="$2" body="${3:-}" out status
    out="$(mktemp)"
    local args=(-s -o "$out" -w '%{http_code}' --max-time 10 -X "$method"
        -H "Authorization: Bearer $ADMIN_KEY" "$BASE_URL$path")
    if [[ -n "$body" ]]; then
        args+=(-H 'Content-Type: application/json' --data "$body")
    fi
    status="$(curl "${args[@]}" || true)"
    if [[ "$status" != 2* ]]; then
        printf 'error: %s %s answered %s: %s\n' "$method" "$path" "${status:-no response}" "$(cat "$out")" >&2
        rm -f "$out"
        return 1
    fi
    cat "$out"
    rm -f "$out"
}

# json_field FIELD: reads a JSON object on stdin and prints one top-level string field.
json_field() {
    python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"
}

# account_listed ID: true when GET /api/admin/accounts lists the account.
account_listed() {
    admin_api GET /api/admin/accounts | python3 -c '
import json, sys
items = json.load(sys.stdin).get("items", [])
sys.exit(0 if any(a.get("id") == sys.argv[1] for a in items) else 1)' "$1"
}

ACCOUNT_ID=""
PLUGIN_KEY=""
DASHBOARD_KEY=""
if [[ -f "$STACK_ENV" ]]; then
    ACCOUNT_ID="$(sed -n "s/^ACCOUNT_ID=//p" "$STACK_ENV" | tr -d "'\"")"
    PLUGIN_KEY="$(sed -n "s/^PLUGIN_KEY=//p" "$STACK_ENV" | tr -d "'\"")"
    DASHBOARD_KEY="$(sed -n "s/^DASHBOARD_KEY=//p" "$STACK_ENV" | tr -d "'\"")"
fi
if [[ -n "$ACCOUNT_ID" && -n "$PLUGIN_KEY" && -n "$DASHBOARD_KEY" ]] && account_listed "$ACCOUNT_ID"; then
    log "reusing demo account $ACCOUNT_ID from $STACK_ENV"
else
    log "creating the demo account"
    ACCOUNT_ID="$(admin_api POST /api/admin/accounts '{"name":"Demo Network"}' | json_field id)"
    PLUGIN_KEY="$(admin_api POST "/api/admin/accounts/$ACCOUNT_ID/keys" \
        '{"kind":"plugin","label":"demo plugin"}' | json_field key)"
    DASHBOARD_KEY="$(admin_api POST "/api/admin/accounts/$ACCOUNT_ID/keys" \
        '{"kind":"dashboard","label":"demo dashboard"}' | json_field key)"
fi

# The demo owner: a person who signs in to the dashboard at $BASE_URL (API keys are for bots).
# Reused while stack.env still holds a login and password that sign in; otherwise a new owner
# with a random password (an old owner whose password is lost gets a suffixed login instead).
DASHBOARD_LOGIN=""
DASHBOARD_PASSWORD=""
if [[ -f "$STACK_ENV" ]]; then
    DASHBOARD_LOGIN="$(sed -n "s/^DASHBOARD_LOGIN=//p" "$STACK_ENV" | tr -d "'\"")"
    DASHBOARD_PASSWORD="$(sed -n "s/^DASHBOARD_PASSWORD=//p" "$STACK_ENV" | tr -d "'\"")"
fi
# member_listed LOGIN: true when the demo account has a member with that login.
member_listed() {
    admin_api GET "/api/admin/accounts/$ACCOUNT_ID/members" | python3 -c '
import json, sys
items = json.load(sys.stdin).get("items", [])
sys.exit(0 if any(m.get("login") == sys.argv[1] for m in items) else 1)' "$1"
}
if [[ -n "$DASHBOARD_LOGIN" && -n "$DASHBOARD_PASSWORD" ]] && member_listed "$DASHBOARD_LOGIN"; then
    log "reusing dashboard owner $DASHBOARD_LOGIN from $STACK_ENV"
else
    DASHBOARD_LOGIN="owner@demo.local"
    if member_listed "$DASHBOARD_LOGIN"; then
        DASHBOARD_LOGIN="owner-$(random_hex 3)@demo.local"
    fi
    DASHBOARD_PASSWORD="$(random_hex 12)"
    log "creating dashboard owner $DASHBOARD_LOGIN"
    admin_api POST "/api/admin/accounts/$ACCOUNT_ID/members" \
        "{\"login\":\"$DASHBOARD_LOGIN\",\"display_name\":\"Demo Owner\",\"role\":\"owner\",\"password\":\"$DASHBOARD_PASSWORD\"}" \
        >/dev/null
fi

(
    umask 077
    {
        echo "# Written by deploy/up.sh. Shell syntax: source it."
        printf 'BASE_URL=%q\n' "$BASE_URL"
        printf 'ADMIN_KEY=%q\n' "$ADMIN_KEY"
        printf 'ACCOUNT_ID=%q\n' "$ACCOUNT_ID"
        printf 'PLUGIN_KEY=%q\n' "$PLUGIN_KEY"
        printf 'DASHBOARD_KEY=%q\n' "$DASHBOARD_KEY"
        printf 'DASHBOARD_LOGIN=%q\n' "$DASHBOARD_LOGIN"
        printf 'DASHBOARD_PASSWORD=%q\n' "$DASHBOARD_PASSWORD"
        printf 'NATS_URL=%q\n' "$NATS_URL"
        printf 'DATABASE_URL=%q\n' "$DATABASE_URL"
        printf 'WEBHOOK_SECRETS_KEY=%q\n' "$WEBHOOK_SECRETS_KEY"
        printf 'WEBHOOK_ALLOW_NETWORKS=%q\n' "$WEBHOOK_ALLOW_NETWORKS"
        printf 'PRIVACY_MASTER_KEY=%q\n' "$PRIVACY_MASTER_KEY"
    } >"$STACK_ENV"
)
chmod 600 "$STACK_ENV"

cat <<EOF

The local stack is up.
  base URL:       $BASE_URL
  admin key:      $ADMIN_KEY
  account:        $ACCOUNT_ID (Demo Network)
  plugin key:     $PLUGIN_KEY
  dashboard key:  $DASHBOARD_KEY
  dashboard:      $BASE_URL/ (sign in as $DASHBOARD_LOGIN, password $DASHBOARD_PASSWORD)
  game server:    $BASE_URL/connect (a plugin key, its config.yml and the plugin jar)
  all of these:   $STACK_ENV (source it)

Try:
  curl -s -H "Authorization: Bearer $DASHBOARD_KEY" $BASE_URL/api/servers

Alerts: webhook destinations may point at this machine (WEBHOOK_ALLOW_NETWORKS=$WEBHOOK_ALLOW_NETWORKS),
so a local receiver works, e.g. http://127.0.0.1:9000/hook (add it on $BASE_URL/alerts).

Logs: $STACK_LOG, $NATS_LOG, $PG_LOG
Stop: ./deploy/down.sh
EOF

if [[ "$demo" == true ]]; then
    section "demo fleet"
    log "starting $FLEET_BIN against $BASE_URL (log: $FLEET_LOG)"
    printf '\n----- %s deploy/up.sh starting demo fleet -----\n' "$(date -u +%FT%TZ)" >>"$FLEET_LOG"
    # The first start for an account also backfills 30 days of history (retention and trend
    # charts); the fleet creates the marker once that history is stored and skips it while
    # the marker exists, so a restart does not send it again (FLEET_HISTORY_DAYS=0: none).
    HISTORY_MARKER="$LOCAL_DIR/demo-history-$ACCOUNT_ID.done"
    [[ -f "$HISTORY_MARKER" ]] || log "the fleet backfills ${FLEET_HISTORY_DAYS:-30} days of history first"
    # Only what the fleet needs from $STACK_ENV: the base URL and the demo account's plugin key.
    BASE_URL="$BASE_URL" PLUGIN_KEY="$PLUGIN_KEY" RUST_LOG="${RUST_LOG:-info}" \
        FLEET_HISTORY_DAYS="${FLEET_HISTORY_DAYS:-30}" FLEET_HISTORY_MARKER="$HISTORY_MARKER" \
        setsid "$FLEET_BIN" </dev/null >>"$FLEET_LOG" 2>&1 &
    fleet_pid=$!
    echo "$fleet_pid" >"$FLEET_PID"
    sleep 1
    if ! pid_alive "$fleet_pid"; then
        tail -n 20 "$FLEET_LOG" >&2 || true
        rm -f "$FLEET_PID"
        die "the demo fleet exited during start-up (log: $FLEET_LOG); the stack is still running: ./deploy/down.sh stops it"
    fi
    echo "Demo fleet: running (pid $fleet_pid), log: $FLEET_LOG"
fi

if [[ "$detach" == true ]]; then
    exit 0
fi

# Foreground: follow the log until Ctrl-C (or until the stack exits), then stop everything.
echo
log "following $STACK_LOG; Ctrl-C stops the stack, nats-server and PostgreSQL"
tail -n 0 -F "$STACK_LOG" &
tail_pid=$!
stopping=false
shutdown() {
    [[ "$stopping" == true ]] && return
    stopping=true
    kill "$tail_pid" 2>/dev/null || true
    echo
    "$REPO_ROOT/deploy/down.sh"
}
trap 'shutdown; exit 0' INT TERM
while pid_alive "$stack_pid"; do
    sleep 1
done
shutdown
die "the stack exited (log: $STACK_LOG)"
