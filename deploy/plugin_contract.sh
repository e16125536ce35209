#!/usr/bin/env bash
# The plugin's cross-language contract tests: the plugin core (Java) sends every record kind to a
# real stack (the debug build of `stack` on a private nats-server and PostgreSQL database) and reads
# each back through the dashboard API, with the stack killed and restarted in the middle; and two
# plugin cores read the dashboard's actions from the stack's feed and enforce each once, across a
# restart of the stack and of one core (EnforcementIT); and two cores with a recording punishment
# plugin apply a dashboard ban through it on the writer only, once, with its echo not sent twice
# and its revokes tracked both ways (PunishmentBridgeIT).
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
# shellcheck source=deploy/throwaway_lib.sh
source "$(dirname "$0")/throwaway_lib.sh"
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
cleanup() {
    throwaway_cleanup
    rm -rf "$work"
}
trap cleanup EXIT

throwaway_nats "$work/nats" "$out_dir/nats.log"
nats_port="$THROWAWAY_NATS_PORT"
throwaway_database "$work" warden_plugin_contract
database_url="$THROWAWAY_DATABASE_URL"

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
    WARDEN_IT_STACK_LOG="$out_dir/stack.log" WARDEN_IT_NATS_URL="nats://127.0.0.1:$nats_port" \
    mvn -B -ntp -f plugin/pom.xml -pl core test -Dtest='ContractIT,EnforcementIT,PunishmentBridgeIT' -Dsurefire.failIfNoSpecifiedTests=false
