#!/usr/bin/env bash
# Fuzzes the whole HTTP API from its own OpenAPI document (schemathesis), against a private
# stack, and fails on any finding of any check or on a pipeline that no longer projects afterwards.
#
#   ./deploy/fuzz.sh [--examples N] [--strict-examples N] [--seed N] [--no-build]
#
#   --examples N  fuzzing-phase cases per operation (default $FUZZ_EXAMPLES or 100); the
#                 examples and coverage phases add their own (boundary values, each documented
#                 example, every status the schema names); 0 skips the default pass
#   --strict-examples N
#                 the same for the strict pass (default $FUZZ_STRICT_EXAMPLES or 50; 0 skips it)
#   --seed N      reproduce an earlier run (the seed is printed at the start)
#   --kinds LIST  only these kinds of caller, comma-separated (default: plugin,dashboard,admin,public)
#   --no-build    use target/debug/stack as it is (deploy/test.sh has just built it)
#
# The stack is the debug build of `stack` on free loopback ports, with its own nats-server and
# database under a temporary directory: it never touches .local/ or another run. When
# TEST_DATABASE_URL is set (deploy/test.sh's throw-away cluster) the database is created there,
# else a private PostgreSQL cluster is started too. Everything is removed at exit.
#
# One schemathesis run per kind of caller: plugin key (tag plugin), dashboard key (tags events
# and players), admin key (tag admin) and no key (tag public), each with `--checks all`.
# The build fails on any finding of any check (a 5xx, an undocumented status or content type, a
# response that breaks its schema, a schema-valid request refused or an invalid one accepted),
# on a run that could not complete, and when a record written after the fuzzing is not readable
# within 30 s (a hostile record stopped the projector). What the document cannot say in JSON
# Schema (time windows relative to now, cross-field rules, opaque cursors) is kept out of the
# schema-valid cases by fuzz_hooks.py, each rule named there.
#
# Then a strict pass, the same four runs' fuzzing phase with fewer cases (kinds `<kind>-strict`,
# a few minutes in all): its hooks (FUZZ_STRICT=1) only rotate keys, move times into their
# windows (keeping schemathesis's own spelling of each), drop cursors, order `from`/`to`,
# repair the other cross-field rules and pass over references to objects that must exist.
# Everything JSON Schema can state (integers written `2.0`, batch sizes, lengths, patterns,
# ranges, enums, required fields) comes from the document alone, so any disagreement between
# the document and the decoders is a finding.
# Reports: target/fuzz/<kind>.json (schemathesis's own), target/fuzz/stack.log.
set -euo pipefail
# A failing admin call inside $(...) (new_keys) must stop the script, not yield an empty key.
shopt -s inherit_errexit

# shellcheck source=deploy/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=deploy/throwaway_lib.sh
source "$(dirname "$0")/throwaway_lib.sh"
cd "$REPO_ROOT"

examples="${FUZZ_EXAMPLES:-100}"
strict_examples="${FUZZ_STRICT_EXAMPLES:-50}"
seed="${FUZZ_SEED:-$((RANDOM * 32768 + RANDOM))}"
kinds="plugin,dashboard,admin,public"
build=true
while (($#)); do
    case "$1" in
    --examples)
        examples="${2:?--examples needs a number}"
        shift
        ;;
    --strict-examples)
        strict_examples="${2:?--strict-examples needs a number}"
        shift
        ;;
    --kinds)
        kinds="${2:?--kinds needs a list}"
        shift
        ;;
    --seed)
        seed="${2:?--seed needs a number}"
        shift
        ;;
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
require_python
command -v curl >/dev/null 2>&1 || apt_install curl ca-certificates
ensure_postgres_installed
ensure_nats_installed
ensure_schemathesis_installed
if [[ "$build" == true ]]; then
    cargo build -p stack
fi
STACK_BIN="${CARGO_TARGET_DIR:-$REPO_ROOT/target}/debug/stack"
[[ -x "$STACK_BIN" ]] || die "$STACK_BIN does not exist (cargo build -p stack)"

section "private stack"
work="$(mktemp -d "${TMPDIR:-/tmp}/warden-fuzz.XXXXXX")"
out_dir="$REPO_ROOT/target/fuzz"
rm -rf "$out_dir"
mkdir -p "$out_dir"
stack_pid=""
cleanup() {
    if [[ -n "$stack_pid" ]]; then stop_pid "$stack_pid" "fuzz stack" 20; fi
    [[ -f "$work/stack.log" ]] && cp "$work/stack.log" "$out_dir/stack.log"
    throwaway_cleanup
    rm -rf "$work"
}
trap cleanup EXIT

throwaway_nats "$work/nats" "$work/nats/nats.log"
nats_port="$THROWAWAY_NATS_PORT"
throwaway_database "$work" warden_fuzz
database_url="$THROWAWAY_DATABASE_URL"

http_port="$(free_port)"
base_url="http://127.0.0.1:$http_port"
admin_key="wdn_admin_$(random_hex 32)"
log "starting $STACK_BIN on $base_url (log: $work/stack.log)"
# TRUSTED_PROXIES: the fuzzer is the "proxy" and names a made-up client per request (fuzz_hooks.py).
BIND_ADDR="127.0.0.1:$http_port" NATS_URL="nats://127.0.0.1:$nats_port" DATABASE_URL="$database_url" \
    ADMIN_KEY="$admin_key" IP_HASH_KEY="$(random_hex 32)" TRUSTED_PROXIES=127.0.0.1 \
    WEBHOOK_SECRETS_KEY="$(random_hex 32)" PRIVACY_MASTER_KEY="$(random_hex 32)" \
    LOG_FORMAT=json RUST_LOG="${RUST_LOG:-info}" \
    "$STACK_BIN" </dev/null >"$work/stack.log" 2>&1 &
stack_pid=$!
for ((i = 0; i < 480; i++)); do
    [[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$base_url/readyz" || true)" == 200 ]] && break
    pid_alive "$stack_pid" || die "the stack exited during start-up: $(tail -n 20 "$work/stack.log")"
    sleep 0.25
done
[[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$base_url/readyz" || true)" == 200 ]] ||
    die "the stack was not ready within 120 s: $(tail -n 20 "$work/stack.log")"

# api METHOD PATH KEY [BODY]: prints the response body; fails unless the status is 2xx.
api() {
    local method="$1" path="$2" key="$3" body="${4:-}" status
    local args=(-s -o "$work/response" -w '%{http_code}' --max-time 10 -X "$method"
        -H "Authorization: Bearer $key" "$base_url$path")
    [[ -z "$body" ]] || args+=(-H 'Content-Type: application/json' --data "$body")
    status="$(curl "${args[@]}" || true)"
    [[ "$status" == 2* ]] || die "$method $path answered ${status:-nothing}: $(cat "$work/response")"
    cat "$work/response"
}
json_field() { python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }
new_account() { api POST /api/admin/accounts "$admin_key" "{\"name\":\"$1\"}" | json_field id; }
new_key() {
    api POST "/api/admin/accounts/$1/keys" "$admin_key" "{\"kind\":\"$2\",\"label\":\"fuzz $2\"}" | json_field key
}
# new_keys ACCOUNT KIND N: prints N new keys, comma-separated.
new_keys() {
    local keys=() i
    for ((i = 0; i < $3; i++)); do keys+=("$(new_key "$1" "$2")"); done
    (
        IFS=,
        printf '%s\n' "${keys[*]}"
    )
}

# Enough keys that no key spends its quota (1,000 plugin / 60 dashboard requests a minute):
# schemathesis's 429s would hide the handlers from it (fuzz_hooks.py rotates them).
account="$(new_account "Fuzzed Network")"
plugin_keys="$(new_keys "$account" plugin 4)"
dashboard_keys="$(new_keys "$account" dashboard 100)"
log "account $account: 4 plugin keys, 100 dashboard keys"

section "schemathesis $SCHEMATHESIS_VERSION (seed $seed, $examples fuzzing cases per operation, $strict_examples strict)"
# fuzz KIND KEYS FILTER...: one run over the operations FILTER selects, with these keys.
# One worker: with two, Debian's Python 3.11 sometimes fails inside hypothesis ("AST constructor
# recursion depth mismatch", a CPython race) and an operation goes untested.
runs_failed=()
# No persistent cache: schemathesis would otherwise keep a .schemathesis/ in the working tree.
printf '[cache]\nenabled = false\n' >"$work/schemathesis.toml"
# 413 is how the service refuses a batch over 1000 records (the document's maxItems): a
# rejection like 400 and 422, which the check's default list does not name.
cat >>"$work/schemathesis.toml" <<'TOML'
[checks.negative_data_rejection]
expected-statuses = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429", "5xx"]
TOML
# FUZZ_STRICT (0 or 1) and run_examples pick the pass.
reports=()
fuzz() {
    local kind="$1" key_list="$2" status=0
    shift 2
    [[ ",$kinds," == *",${kind%-strict},"* ]] || return 0
    log "fuzzing as $kind: $*"
    reports+=("$kind")
    FUZZ_KEYS="$key_list" FUZZ_STRICT="${FUZZ_STRICT:-0}" SCHEMATHESIS_HOOKS="$REPO_ROOT/deploy/fuzz_hooks.py" \
        "$VENV_DIR/bin/st" --config-file "$work/schemathesis.toml" run "$base_url/api/openapi.json" --url "$base_url" \
        --checks all --max-examples "$run_examples" --seed "$seed" --workers 1 \
        --continue-on-failure --request-timeout 20 --generation-database none --no-color \
        --output-truncate true --report json,ndjson --report-json-path "$out_dir/$kind.json" \
        --report-ndjson-path "$out_dir/$kind.ndjson" \
        "$@" >"$out_dir/$kind.txt" 2>&1 || status=$?
    # Exit 1 means "checks failed" (sorted out below); anything else is a run that broke.
    if ((status > 1)) || [[ ! -s "$out_dir/$kind.json" ]]; then
        tail -n 40 "$out_dir/$kind.txt" >&2
        runs_failed+=("$kind (schemathesis exit $status)")
    fi
}
# every_kind SUFFIX [ARGS...]: one run per kind of caller.
every_kind() {
    local suffix="$1"
    shift
    fuzz "plugin$suffix" "$plugin_keys" --include-tag plugin "$@"
    # The live stream never ends by itself: a fuzzer request to it only times out.
    fuzz "dashboard$suffix" "$dashboard_keys" --include-tag events --include-tag players \
        --exclude-path /api/v1/events/stream "$@"
    fuzz "admin$suffix" "$admin_key" --include-tag admin "$@"
    fuzz "public$suffix" "" --include-tag public "$@"
}
if ((examples > 0)); then
    run_examples="$examples" FUZZ_STRICT=0 every_kind ""
fi
if ((strict_examples > 0)); then
    log "strict pass: the hooks repair only what the document cannot say"
    # Only the fuzzing phase: the coverage phase's boundary values are the same in both passes
    # (the default pass's hooks touch nothing JSON Schema can state either), and it takes
    # minutes whatever the number of examples.
    run_examples="$strict_examples" FUZZ_STRICT=1 every_kind "-strict" --phases fuzzing
fi

section "the pipeline still projects"
# A hostile record that stops the projector makes no 5xx: write to a fresh account and read back.
canary="$(new_account "Canary Network")"
canary_plugin="$(new_key "$canary" plugin)"
canary_dashboard="$(new_key "$canary" dashboard)"
canary_server="$(python3 -c 'import uuid; print(uuid.uuid4())')"
projects=false
for ((i = 0; i < 120; i++)); do
    # The plugin key reaches ingest through the key bucket's watch: retry until it is accepted.
    if [[ "$i" == 0 || "$(cat "$work/canary-write" 2>/dev/null)" != 202 ]]; then
        curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X POST -H "Authorization: Bearer $canary_plugin" \
            -H 'Content-Type: application/json' "$base_url/api/plugin/heartbeat" \
            --data "{\"server_id\":\"$canary_server\",\"tps\":20,\"player_count\":1,\"max_players\":10}" \
            >"$work/canary-write" || true
    fi
    if curl -s --max-time 5 -H "Authorization: Bearer $canary_dashboard" "$base_url/api/servers" |
        grep -q "$canary_server"; then
        projects=true
        break
    fi
    sleep 0.25
done
if [[ "$projects" == true ]]; then
    log "a heartbeat written after the fuzzing was readable within $((i / 4)) s"
else
    runs_failed+=("the pipeline: a heartbeat written after the fuzzing was not readable within 30 s")
fi

section "findings"
# pipefail: the report's exit status (1 on server or tool errors) survives the tee.
"$VENV_DIR/bin/python" deploy/fuzz_report.py "$work/stack.log" "$out_dir" "${reports[@]}" |
    tee "$out_dir/findings.txt" || runs_failed+=("findings or fuzzer errors (above)")
if ((${#runs_failed[@]} > 0)); then
    log "fuzzing failed: ${runs_failed[*]}"
    exit 1
fi
log "no findings"
