#!/usr/bin/env bash
# After an unclean stop, postmaster.pid may name a pid that is now an unrelated process (the pid
# was reused) or a zombie. PostgreSQL and `pg_ctl status` only ask whether that pid exists, so
# without lib.sh's check pg_start took the cluster for running, waited 30 s and failed. This
# starts a throw-away cluster, stops it uncleanly, plants such a postmaster.pid and requires
# pg_start to bring the cluster up within a few seconds; then it requires the opposite too: a
# live postmaster of the data directory is recognised as running and its lock file is kept.
#
#   deploy/tests/stale_pid.sh     (run by ./deploy/test.sh)
set -euo pipefail

# shellcheck source=deploy/lib.sh
source "$(dirname "$0")/../lib.sh"

ensure_postgres_installed
require_python

# pg_start waits up to 30 s for readiness; a healthy start here takes about a second.
START_DEADLINE_SECS=10

work="$(mktemp -d "${TMPDIR:-/tmp}/warden-stale-pid.XXXXXX")"
data="$work/data"
port="$(free_port)"
holder_pid=""
cleanup() {
    [[ -n "$holder_pid" ]] && kill "$holder_pid" 2>/dev/null
    pg_stop "$data" immediate >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
pg_own_dir "$work"

fail() {
    tail -n 20 "$work/postgres.log" >&2 || true
    die "stale_pid: $*"
}

# start_within_deadline WHAT: pg_start in a subshell (its die must not end this script), timed.
start_within_deadline() {
    local what="$1" started elapsed
    started="$(date +%s)"
    (pg_start "$data" "$work/run" "$port" "$work/postgres.log" "fsync = off") ||
        fail "pg_start failed with $what"
    elapsed=$(($(date +%s) - started))
    ((elapsed <= START_DEADLINE_SECS)) ||
        fail "pg_start took ${elapsed}s with $what (deadline ${START_DEADLINE_SECS}s)"
    "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$port" || fail "not accepting connections after start with $what"
    log "stale_pid: started in ${elapsed}s with $what"
}

# plant_pid PID: stops the cluster uncleanly and leaves a postmaster.pid naming PID, as a crash
# would have left it (an immediate stop removes the file, so its last contents are written back).
plant_pid() {
    local pid="$1" saved
    saved="$(cat "$data/postmaster.pid")"
    pg_stop "$data" immediate >/dev/null
    [[ ! -f "$data/postmaster.pid" ]] || fail "postmaster.pid survived the immediate stop"
    { printf '%s\n' "$pid"; tail -n +2 <<<"$saved"; } | pg_as_owner tee "$data/postmaster.pid" >/dev/null
    pg_as_owner chmod 600 "$data/postmaster.pid"
}

# run_as_owner_detached PIDFILE CMD: starts CMD in the background as the cluster's owner and
# writes the pid of the process that runs CMD to PIDFILE (as root, `$!` would be runuser's pid).
run_as_owner_detached() {
    local pidfile="$1"
    shift
    # shellcheck disable=SC2016  # expanded by the inner shell
    pg_as_owner bash -c 'pidfile="$1"; shift; "$@" </dev/null >/dev/null 2>&1 & echo $! >"$pidfile"' _ "$pidfile" "$@"
}

pg_init "$data"
start_within_deadline "a fresh cluster"
pg_running "$data" || fail "pg_running does not see the live postmaster"

# 1. A reused pid: an unrelated live process of the same user (so kill -0 succeeds on it, which is
#    all PostgreSQL itself checks).
run_as_owner_detached "$work/sleep.pid" sleep 300
holder_pid="$(cat "$work/sleep.pid")"
plant_pid "$holder_pid"
! pg_running "$data" || fail "pg_running takes an unrelated process (pid $holder_pid) for the postmaster"
start_within_deadline "postmaster.pid naming an unrelated live process"
pid_alive "$holder_pid" || fail "the unrelated process was signalled"
kill "$holder_pid" 2>/dev/null || true
holder_pid=""

# 2. A zombie: a child that exited under a parent that never reaps it (the subshell execs sleep).
# shellcheck disable=SC2016  # expanded by the inner shell
pg_as_owner bash -c '(sleep 0.2 & echo $! >"$1"; exec sleep 300) </dev/null >/dev/null 2>&1 & echo $! >"$2"' \
    _ "$work/zombie.pid" "$work/parent.pid"
holder_pid="$(cat "$work/parent.pid")"
zombie="$(cat "$work/zombie.pid")"
for ((i = 0; i < 50; i++)); do
    [[ "$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$zombie/status" 2>/dev/null)" == Z ]] && break
    sleep 0.1
done
[[ "$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$zombie/status" 2>/dev/null)" == Z ]] ||
    fail "could not make a zombie process to test with"
plant_pid "$zombie"
! pg_running "$data" || fail "pg_running takes a zombie (pid $zombie) for the postmaster"
start_within_deadline "postmaster.pid naming a zombie"
kill "$holder_pid" 2>/dev/null || true
holder_pid=""

# 3. The real postmaster is still recognised, and a start leaves it and its lock file alone.
postmaster="$(head -n 1 "$data/postmaster.pid")"
pg_running "$data" || fail "pg_running does not see the restarted postmaster"
start_within_deadline "the cluster already running"
[[ "$(head -n 1 "$data/postmaster.pid")" == "$postmaster" ]] || fail "postmaster.pid of the live postmaster changed"

log "stale_pid: ok"
