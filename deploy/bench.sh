#!/usr/bin/env bash
# Runs the benchmark on private servers and writes target/bench/report.json plus a table.
#
#   ./deploy/bench.sh [--quick] [--debug] [--only writes|reads|search|alerts|privacy|partitions|rebuild]
#
#   --quick   a small version that finishes in a couple of minutes (CI runs it via test.sh)
#   --debug   use the debug build (what test.sh has already built) instead of a release build;
#             the numbers are then meaningless, only the harness is exercised
#   --only P  run only the write phases (ingest, projector, baselines) or the read phases
#             (live stream, open streams, reads on the large dataset, the staff dashboard's
#             Overview, 30-day server chart, pages and sign-in), or only the search targets
#             (player search, chat keyword search, the chat index's cost to the projector),
#             or only the alerts target (plugin write -> signed webhook at a local receiver),
#             or only the privacy target (durable ingest with personal fields sealed against
#             the same in clear, the projector's catch-up over each backlog, and custom events
#             with every property sealed against one of five and against clear), or only the
#             partition targets (two projector processes against one on the partitioned log,
#             and the mixed tenant: one account's backlog while another's writes stay readable),
#             or only the rebuild targets (the mixed backlog rebuilt beside the live projector
#             and readers: records/s, phases, swap, ETA, against raw binary COPY of the rows)
#
# It builds warden-bench (one cargo build), starts a private nats-server with
# `sync_interval: always` (as the stack runs it) and a private PostgreSQL with the stack's
# durable settings (fsync on, unlike test.sh's throw-away cluster), both on free loopback ports
# under a temporary directory, runs `warden-bench run`, and removes everything at exit.
# warden-bench starts ingest, projector, query-api and the notifier as child processes on loopback.
set -euo pipefail

# shellcheck source=deploy/lib.sh
source "$(dirname "$0")/lib.sh"
cd "$REPO_ROOT"

quick=()
only=()
profile=release
while (($#)); do
    arg="$1"
    shift
    case "$arg" in
    --quick) quick=(--quick) ;;
    --only)
        [[ $# -gt 0 ]] || die "--only needs writes, reads, search, alerts, privacy, partitions or rebuild"
        only=(--only "$1")
        shift
        ;;
    --debug) profile=debug ;;
    -h | --help)
        sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
        exit 0
        ;;
    *) die "unknown argument: $arg (see --help)" ;;
    esac
done

section "install what is missing"
require_python
ensure_postgres_installed
ensure_nats_installed

section "build ($profile)"
if [[ "$profile" == release ]]; then
    cargo build --release -p warden-bench
else
    cargo build -p warden-bench
fi
BENCH_BIN="${CARGO_TARGET_DIR:-$REPO_ROOT/target}/$profile/warden-bench"
[[ -x "$BENCH_BIN" ]] || die "cargo build succeeded but $BENCH_BIN does not exist"

section "private servers"
work="$(mktemp -d "${TMPDIR:-/tmp}/warden-bench.XXXXXX")"
nats_pid=""
cleanup() {
    if [[ -n "$nats_pid" ]]; then stop_pid "$nats_pid" "bench nats-server" 15; fi
    pg_stop "$work/pg/data" fast || true
    rm -rf "$work"
}
trap cleanup EXIT
# 1,000 open streams plus their server ends need more than the usual 1,024 descriptors.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || warn "could not raise the open-file limit"

nats_port="$(free_port)"
mkdir -p "$work/nats/store"
cat >"$work/nats/nats.conf" <<CONF
listen: 127.0.0.1:$nats_port
max_payload: 8MB
jetstream {
  store_dir: "$work/nats/store"
  # As in the stack (deploy/lib.sh): fsync every write, so every ack measured is durable.
  sync_interval: always
}
CONF
log "starting nats-server on 127.0.0.1:$nats_port"
"$NATS_BIN" -c "$work/nats/nats.conf" </dev/null >"$work/nats/nats.log" 2>&1 &
nats_pid=$!
for ((i = 0; i < 100; i++)); do
    (exec 3<>"/dev/tcp/127.0.0.1/$nats_port") 2>/dev/null && break
    pid_alive "$nats_pid" || die "nats-server exited: $(tail -n 5 "$work/nats/nats.log")"
    sleep 0.1
done

mkdir -p "$work/pg"
pg_own_dir "$work"
pg_init "$work/pg/data"
pg_port="$(free_port)"
# The stack's settings (defaults: fsync, synchronous_commit, full_page_writes all on); only
# the connection limit is raised for the services' pools and the harness.
pg_start "$work/pg/data" "$work/pg/run" "$pg_port" "$work/pg/postgres.log" "max_connections = 200"

section "benchmark"
mkdir -p target/bench
pg_pid="$(head -n 1 "$work/pg/data/postmaster.pid")"
BENCH_NATS_URL="nats://127.0.0.1:$nats_port" BENCH_PG_URL="postgres://postgres@127.0.0.1:$pg_port" \
    BENCH_NATS_PID="$nats_pid" BENCH_PG_PID="$pg_pid" \
    "$BENCH_BIN" run ${quick[@]+"${quick[@]}"} ${only[@]+"${only[@]}"} --out target/bench/report.json
