#!/usr/bin/env bash
# Runs docs/getting-started.md's own commands against a fresh private stack, and the admin
# commands of docs/self-hosting.md ("Admin commands in containers") from the shipped binaries.
#
#   deploy/tests/getting_started.sh     (run by ./deploy/test.sh; GETTING_STARTED_IN_TEST=0 skips)
#
# 1. Starts a stack of its own: WARDEN_HOME in a temporary directory, free ports, the debug build
#    (./deploy/up.sh --detach --debug; the page's `--demo` is left out: the demo fleet needs the
#    release build and writes 30 days of history first), PLUGIN_IN_UP=0.
# 2. Copies target/debug/{query-api,projector,ingest} into a temporary bin/, puts only that and
#    the system's directories on PATH, and cd's outside the checkout.
# 3. Runs every `sh` block of the page after the first, in order, in one bash with an empty
#    environment (the blocks source stack.env themselves), with two substitutions: `.local/`
#    is this stack's WARDEN_HOME, and curl also writes `HTTP_STATUS <code>` to stderr. A block
#    preceded by `<!-- not run by deploy/tests/getting_started.sh ... -->` is skipped. After each
#    block its documented outcome is checked (status codes, JSON printed, the owner signs in,
#    the invite links open, the heartbeat's server is on the Servers page and in the API).
# 4. Runs each admin command of docs/self-hosting.md's table with only the variables its
#    "needs" column names, and checks the JSON it prints.
# Then ./deploy/down.sh with the same WARDEN_HOME; everything is removed on any exit.
set -euo pipefail

# shellcheck source=deploy/lib.sh
source "$(dirname "$0")/../lib.sh"
cd "$REPO_ROOT"

require_python
ensure_postgres_installed
ensure_nats_installed
command -v jq >/dev/null 2>&1 || apt_install jq

work="$(mktemp -d "${TMPDIR:-/tmp}/warden-getting-started.XXXXXX")"
# PostgreSQL runs as the postgres user when we are root: it must reach WARDEN_HOME.
chmod 755 "$work"
export WARDEN_HOME="$work/home"
cleanup() {
    local status=$?
    if ((status != 0)) && [[ -f "$WARDEN_HOME/logs/stack.log" ]]; then
        log "last lines of the stack's log:"
        tail -n 30 "$WARDEN_HOME/logs/stack.log" >&2 || true
    fi
    ./deploy/down.sh >/dev/null 2>&1 || true
    rm -rf "$work"
    exit "$status"
}
trap cleanup EXIT
# Interrupted or terminated: still stop the stack and remove everything (the EXIT trap).
trap 'exit 130' INT
trap 'exit 143' TERM

section "getting started: a fresh stack"
# The page's first block, as the test runs it.
first_block="$(python3 deploy/tests/doc_blocks.py docs/getting-started.md --first)"
[[ "$first_block" == "./deploy/up.sh --detach --demo" ]] ||
    die "docs/getting-started.md's first command changed: $first_block"
NATS_PORT="$(free_port)" PG_PORT="$(free_port)" HTTP_PORT="$(free_port)" PLUGIN_IN_UP=0 \
    ./deploy/up.sh --detach --debug

bin="$work/bin"
mkdir -p "$bin" "$work/outside"
for binary in query-api projector ingest; do
    [[ -x "${CARGO_TARGET_DIR:-$REPO_ROOT/target}/debug/$binary" ]] ||
        die "target/debug/$binary is missing (cargo test --workspace builds it)"
    cp "${CARGO_TARGET_DIR:-$REPO_ROOT/target}/debug/$binary" "$bin/"
done
clean_path="$bin:/usr/local/bin:/usr/bin:/bin"

section "getting started: the page's commands"
python3 deploy/tests/doc_blocks.py docs/getting-started.md --runner \
    --local-dir "$WARDEN_HOME" --checks "$REPO_ROOT/deploy/tests/getting_started_checks.sh" >"$work/runner.sh"
(cd "$work/outside" && env -i PATH="$clean_path" HOME="$work/outside" OUT="$work/out" \
    bash "$work/runner.sh")

section "admin commands from the shipped binaries"
(cd "$work/outside" && env -i PATH="$clean_path" HOME="$work/outside" \
    STACK_ENV="$WARDEN_HOME/stack.env" bash "$REPO_ROOT/deploy/tests/admin_commands.sh")

section "getting started: stop"
./deploy/down.sh
log "getting started: ok"
