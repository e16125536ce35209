#!/usr/bin/env bash
# Backup and restore, end to end, on a private stack (its own WARDEN_HOME and free ports, the
# debug build): data written through the real APIs (plugin writes, a second member, an alert
# destination, two erased players), every read recorded, ./deploy/backup.sh, the stack stopped
# and its NATS store and PostgreSQL data destroyed, ./deploy/restore.sh, the stack started again
# with the same secrets; then every recorded read must be identical, both members sign in, the
# keys work, the erased players stay erased (their data keys absent from the restored bucket)
# and a new write is readable. Second case: a backup taken before an erasure, restored over the
# deployment (the database that knows the erasure is replaced), or after the data is lost with
# the erasure given by --erasures, leaves that player erased once ./deploy/restore.sh
# --erase-again ran.
#
#   deploy/tests/backup_restore.sh     (run by ./deploy/test.sh; BACKUP_IN_TEST=0 skips it there)
#
# Logs and backups of a failed run stay in target/backup-restore/.
set -euo pipefail

# shellcheck source=deploy/lib.sh
source "$(dirname "$0")/../lib.sh"
cd "$REPO_ROOT"

ensure_natscli_installed
ensure_postgres_installed
# The private stack only: never a deployment named by the caller's environment.
unset NATS_URL DATABASE_URL EVENT_STREAM PRIVACY_BUCKET KEY_BUCKET
require_python

out_dir="$REPO_ROOT/target/backup-restore"
rm -rf "$out_dir"
mkdir -p "$out_dir"
home="$(mktemp -d "${TMPDIR:-/tmp}/warden-backup-test.XXXXXX")"
chmod 755 "$home" # the postgres user must reach its data directory under it
export WARDEN_HOME="$home" PLUGIN_IN_UP=0
NATS_PORT="$(free_port)" PG_PORT="$(free_port)" HTTP_PORT="$(free_port)"
export NATS_PORT PG_PORT HTTP_PORT
passed=false
cleanup() {
    ./deploy/down.sh >/dev/null 2>&1 || true
    if [[ "$passed" != true ]]; then
        cp -r "$home/logs" "$home/nats/nats.log" "$home/pg/postgres.log" "$out_dir/" 2>/dev/null || true
        warn "backup_restore: logs and backups kept in $out_dir"
    fi
    rm -rf "$home"
}
trap cleanup EXIT

fail() { die "backup_restore: $*"; }
step() { log "backup_restore: $*"; }
helper() {
    (
        # shellcheck source=/dev/null
        source "$home/stack.env"
        export BASE_URL ADMIN_KEY ACCOUNT_ID PLUGIN_KEY DASHBOARD_KEY DASHBOARD_LOGIN DASHBOARD_PASSWORD
        python3 deploy/tests/backup_restore.py "$home/state.json" "$@"
    )
}
nats_env() { sed -n "s/^NATS_URL=//p" "$home/stack.env" | tr -d "'\""; }
# stream_state NAME: messages, first and last sequence, deleted count of a stream.
stream_state() {
    "$NATSCLI_BIN" --server "$(nats_env)" stream info "$1" --json | python3 -c '
import json, sys
s = json.load(sys.stdin)["state"]
print(s["messages"], s["first_seq"], s["last_seq"], s.get("num_deleted", 0))'
}
# player_key_present NAME: the player's data key is in the players' key bucket.
player_key_present() {
    local account player
    account="$(sed -n "s/^ACCOUNT_ID=//p" "$home/stack.env" | tr -d "'\"")"
    player="$(helper uuid "$1")"
    "$NATSCLI_BIN" --server "$(nats_env)" kv get GS_PRIVACY_PLAYERS "p.$account.$player" --raw >/dev/null 2>&1
}
up() { ./deploy/up.sh --detach --debug >"$home/up.log" 2>&1 || { tail -n 30 "$home/up.log" >&2; fail "up.sh failed"; }; }

step "starting a private stack in $home"
up
helper write
helper erase early
helper record "$out_dir/reads-before-late-erasure.json"
player_key_present late || fail "the player to erase later has no data key"

step "backup taken before the late erasure (a .tar.gz)"
./deploy/backup.sh "$out_dir/before.tar.gz"
helper erase late
player_key_present late && fail "erasing did not destroy the data key"
helper record "$out_dir/reads.json"
step "backup taken after both erasures (a directory)"
./deploy/backup.sh "$out_dir/after"
python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["complete"] is True' "$out_dir/after/manifest.json" ||
    fail "the manifest does not say the backup is complete"
if ./deploy/backup.sh "$out_dir/after" 2>/dev/null; then fail "backup.sh overwrote an existing backup"; fi
# A missing part (here: the event log) fails the backup, and leaves nothing behind.
if EVENT_STREAM=NO_SUCH_STREAM ./deploy/backup.sh "$out_dir/broken" 2>"$home/broken.log"; then
    fail "backup.sh succeeded without the event log"
fi
[[ ! -e "$out_dir/broken" && ! -e "$out_dir/broken.partial" ]] || fail "a failed backup left files behind"
grep -q "no stream NO_SUCH_STREAM" "$home/broken.log" || fail "a refused backup did not say why: $(cat "$home/broken.log")"
# One failing after the database was dumped (no key bucket of that name) removes what it wrote.
if PRIVACY_BUCKET=NO_SUCH_BUCKET ./deploy/backup.sh "$out_dir/broken" 2>"$home/broken.log"; then
    fail "backup.sh succeeded without the key buckets"
fi
[[ ! -e "$out_dir/broken" && ! -e "$out_dir/broken.partial" ]] || fail "a failed backup left files behind"
grep -q "nothing was written" "$home/broken.log" || fail "a failed backup did not say so: $(cat "$home/broken.log")"
if ./deploy/restore.sh "$out_dir/after" 2>"$home/refused.log"; then fail "restore.sh ran over a running stack"; fi
grep -q "the local stack is running" "$home/refused.log" || fail "restore.sh refused without saying why: $(cat "$home/refused.log")"
log_state="$(stream_state GS_EVENTS)"
python3 - "$out_dir/after/manifest.json" "$log_state" <<'PY' || fail "the manifest's sequences are not the log's"
import json, sys
log = json.load(open(sys.argv[1]))["streams"]["GS_EVENTS"]
messages, first, last, _ = map(int, sys.argv[2].split())
assert (log["messages"], log["first_seq"], log["last_seq"]) == (messages, first, last), log
PY

step "destroying the stack's data"
./deploy/down.sh
rm -rf "$home/nats/store" "$home/pg/data"
./deploy/up.sh --infra-only >"$home/up.log" 2>&1 || fail "up.sh --infra-only failed"
./deploy/restore.sh "$out_dir/after"
[[ "$(stream_state GS_EVENTS)" == "$log_state" ]] ||
    fail "the restored log differs: $(stream_state GS_EVENTS), backed up: $log_state"
player_key_present early && fail "the early erased player's key is back"
player_key_present late && fail "the late erased player's key is back"
player_key_present kept || fail "the kept player's key was lost"
up
helper compare "$out_dir/reads.json"
./deploy/restore.sh --erase-again
helper erased early late
helper after-restore

step "restoring the backup taken before the late erasure, over the deployment"
./deploy/down.sh
./deploy/up.sh --infra-only >"$home/up.log" 2>&1 || fail "up.sh --infra-only failed"
if ./deploy/restore.sh "$out_dir/before.tar.gz" 2>"$home/refused.log"; then
    fail "restore.sh replaced existing data without --force"
fi
grep -q -- "--force" "$home/refused.log" || fail "restore.sh refused without naming --force: $(cat "$home/refused.log")"
./deploy/restore.sh --force "$out_dir/before.tar.gz"
player_key_present late && fail "the restore left the late erased player's key in the bucket"
player_key_present kept || fail "the kept player's key was lost"
up
./deploy/restore.sh --erase-again
helper erased early late
player_key_present late && fail "the late erased player's key is back after --erase-again"

step "the same backup restored after the data is lost, the later erasure given with --erasures"
./deploy/down.sh
rm -rf "$home/nats/store" "$home/pg/data"
./deploy/up.sh --infra-only >"$home/up.log" 2>&1 || fail "up.sh --infra-only failed"
./deploy/restore.sh --erasures "$out_dir/after/erased-players.tsv" "$out_dir/before.tar.gz"
player_key_present late && fail "--erasures left the late erased player's key in the bucket"
up
./deploy/restore.sh --erase-again
helper erased early late

passed=true
rm -rf "$out_dir"
log "backup_restore: ok"
