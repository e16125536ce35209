#!/usr/bin/env bash
# The plugin's cross-language contract test: the plugin core (Java) sends every record kind to a
# real stack (the debug build of `stack` on a private nats-server and PostgreSQL database) and reads
# each back through the dashboard API, with the stack killed and restarted in the middle.
#
#   ./deploy/plugin_contract.sh [--no-build]
#
# The JUnit test (plugin/core/src/test/java/dev/warden/plugin/core/ContractIT.java) starts and
# kills the stack itself through a small run script written here. With TEST_DATABASE_URL set
# (deploy/test.sh sets it) the database is made in that cluster and dropped at the end; otherwise a
# throw-away cluster is started. Logs: target/plugin-contract/.
set -euo pipefail
shopt -s inherit_errexit

# shellcheck source=deploy/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$REPO_ROOT"

build=true
while (($#)); do
    case "$1" in
    --no-build) build=false ;;
    -h | --help)
        sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
        exit 0
        ;;
    *) die "unknown argument: $1 (see --help)" ;;
    esac
    shift
done

section "install what is missing"
ensure_postgres_installed
ensure_nats_installed
ensure_java_maven_installed
if [[ "$build" == true ]]; then
    cargo build -p stack
fi
STACK_BIN="${CARGO_TARGET_DIR:-$REPO_ROOT/target}/debug/stack"
[[ -x "$STACK_BIN" ]] || die "$STACK_BIN does not exist (cargo build -p stack)"

section "private nats-server and database"
work="$(mktemp -d "${TMPDIR:-/tmp}/warden-plugin-contract.XXXXXX")"
out_dir="$REPO_ROOT/target/plugin-contract"
rm -rf "$out_dir"
mkdir -p "$out_dir"
nats_pid=""
db_name=""
cleanup() {
    if [[ -n "$nats_pid" ]]; then stop_pid "$nats_pid" "contract nats-server" 15; fi
    if [[ -n "$db_name" ]]; then
        "$PG_BIN/psql" "$TEST_DATABASE_URL" -qAtc "DROP DATABASE IF EXISTS $db_name WITH (FORCE)" >/dev/null ||
            warn "could not drop database $db_name"
    fi
    pg_stop "$work/pg/data" immediate || true
    rm -rf "$work"
}
trap cleanup EXIT

nats_port="$(free_port)"
mkdir -p "$work/nats/store"
cat >"$work/nats/nats.conf" <<CONF
listen: 127.0.0.1:$nats_port
max_payload: 8MB
jetstream { store_dir: "$work/nats/store" }
CONF
"$NATS_BIN" -c "$work/nats/nats.conf" </dev/null >"$out_dir/nats.log" 2>&1 &
nats_pid=$!
for ((i = 0; i < 100; i++)); do
    (exec 3<>"/dev/tcp/127.0.0.1/$nats_port") 2>/dev/null && break
    pid_alive "$nats_pid" || die "nats-server exited: $(tail -n 5 "$out_dir/nats.log")"
    sleep 0.1
done

if [[ -n "${TEST_DATABASE_URL:-}" ]]; then
    [[ "$TEST_DATABASE_URL" != *\?* ]] || die "TEST_DATABASE_URL with query parameters is not supported here"
    db_name="warden_plugin_contract_$(random_hex 6)"
    "$PG_BIN/psql" "$TEST_DATABASE_URL" -qAtc "CREATE DATABASE $db_name" >/dev/null
    database_url="${TEST_DATABASE_URL%/*}/$db_name"
else
    mkdir -p "$work/pg"
    pg_own_dir "$work"
    pg_init "$work/pg/data"
    pg_port="$(free_port)"
    pg_start "$work/pg/data" "$work/pg/run" "$pg_port" "$work/pg/postgres.log" \
        "fsync = off" "synchronous_commit = off" "max_connections = 100"
    pg_ensure_db "$pg_port" warden
    database_url="postgres://postgres@127.0.0.1:$pg_port/warden"
fi

http_port="$(free_port)"
base_url="http://127.0.0.1:$http_port"
admin_key="wdn_admin_$(random_hex 32)"
# The test runs this to start the stack (and kills it for the outage); the same secrets each time.
cat >"$work/run-stack.sh" <<RUN
#!/usr/bin/env bash
export BIND_ADDR="127.0.0.1:$http_port" NATS_URL="nats://127.0.0.1:$nats_port" DATABASE_URL="$database_url"
export ADMIN_KEY="$admin_key" IP_HASH_KEY="$(random_hex 32)" WEBHOOK_SECRETS_KEY="$(random_hex 32)"
export PRIVACY_MASTER_KEY="$(random_hex 32)" LOG_FORMAT=json RUST_LOG="\${RUST_LOG:-info}"
exec "$STACK_BIN" </dev/null
RUN
chmod 700 "$work/run-stack.sh"

section "plugin contract test"
WARDEN_IT_STACK_CMD="$work/run-stack.sh" WARDEN_IT_BASE_URL="$base_url" WARDEN_IT_ADMIN_KEY="$admin_key" \
    WARDEN_IT_STACK_LOG="$out_dir/stack.log" \
    mvn -B -ntp -f plugin/pom.xml -pl core test -Dtest=ContractIT -Dsurefire.failIfNoSpecifiedTests=false
