#!/usr/bin/env bash
# Restores a backup made by ./deploy/backup.sh into a deployment whose Warden services are
# stopped (NATS and PostgreSQL running): the database (pg_restore), the event log stream and the
# key buckets (natscli's `nats backup restore stream`), each stream checked against the
# manifest's sequences. Then it destroys again the data key of every erased player it knows of
# (a key bucket from before an erasure holds the key again), and says what to run once the
# services are up: `--erase-again`, which erases those players again through the admin API so
# the read models are scrubbed too.
#
#   ./deploy/restore.sh [--force] [--erasures FILE]... BACKUP
#   ./deploy/restore.sh --erase-again [--erasures FILE]...
#
#   BACKUP           a backup directory, or a .tar / .tar.gz archive, from ./deploy/backup.sh
#   --force          replace what exists: delete the streams and buckets the backup holds, drop
#                    the database's schemas, and (local stack) replace a secrets.env that differs
#                    from the backup's (the old one is kept as secrets.env.before-restore);
#                    without it the restore refuses to touch existing data
#   --erasures FILE  more players to erase again: lines "ACCOUNT_ID<TAB>PLAYER_UUID" (e.g. the
#                    erased-players.tsv of a newer backup, or your record of erasure requests)
#   --erase-again    with the services running: erase again, through the admin API, every player
#                    the restored database lists as erased and every one the restore noted
#
# The players erased before the restore (those the database being replaced lists), those of the
# backup and those of --erasures are all erased again. Which deployment: as ./deploy/backup.sh
# (NATS_URL and DATABASE_URL from the environment, else the local stack's stack.env); for
# --erase-again also BASE_URL and ADMIN_KEY (the local stack's come from its stack.env).
set -euo pipefail

# shellcheck source=deploy/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=deploy/backup_lib.sh
source "$(dirname "$0")/backup_lib.sh"
# shellcheck source=deploy/restore_lib.sh
source "$(dirname "$0")/restore_lib.sh"

force=false
erase_again=false
extra_erasures=()
source_path=""
while (($# > 0)); do
    case "$1" in
    --force) force=true ;;
    --erase-again) erase_again=true ;;
    --erasures)
        (($# > 1)) || die "--erasures needs a file"
        [[ -f "$2" ]] || die "erasures file $2 does not exist"
        extra_erasures+=("$2")
        shift
        ;;
    -h | --help)
        sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
        exit 0
        ;;
    -*) die "unknown argument: $1 (see --help)" ;;
    *)
        [[ -z "$source_path" ]] || die "one backup only (see --help)"
        source_path="$1"
        ;;
    esac
    shift
done

load_deployment
require_backup_tools
check_reachable
PENDING_ERASURES="$LOCAL_DIR/restore-erasures.tsv"

if [[ "$erase_again" == true ]]; then
    [[ -z "$source_path" ]] || die "--erase-again takes no backup (it works on the running deployment)"
    erase_again_now ${extra_erasures[@]+"${extra_erasures[@]}"}
    exit 0
fi

[[ -n "$source_path" ]] || die "no backup given (see --help)"
work="$(mktemp -d "${TMPDIR:-/tmp}/warden-restore.XXXXXX")"
trap 'rm -rf "$work"' EXIT
backup="$(open_backup "$source_path" "$work")"
refuse_running_services

section "what exists"
erasures="$work/erasures.tsv"
collect_erasures "$backup" "$erasures" ${extra_erasures[@]+"${extra_erasures[@]}"}
mapfile -t streams < <(read_manifest "$backup" streams | python3 -c 'import json, sys; print("\n".join(json.load(sys.stdin)))')
present="$(list_streams)"
existing=()
for stream in "${streams[@]}"; do
    if grep -qx "$stream" <<<"$present"; then existing+=("$stream"); fi
done
tables="$(pg_query "SELECT count(*) FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')")"
if [[ "$force" != true ]]; then
    ((${#existing[@]} == 0)) || die "these streams exist: ${existing[*]}; --force deletes them first"
    ((tables == 0)) || die "the database $(redact_url "$DATABASE_URL") holds $tables tables; --force replaces them"
fi
install_secrets "$backup" "$force"

section "PostgreSQL"
restore_database "$backup" "$tables"

section "event log and key buckets"
for stream in "${streams[@]}"; do
    if grep -qx "$stream" <<<"$present"; then
        log "deleting the existing stream $stream"
        nats_cli stream rm -f "$stream" >/dev/null
    fi
    log "nats backup restore stream $stream"
    nats_cli backup restore stream "$backup/streams/$stream" --no-progress >/dev/null
    check_restored_stream "$backup" "$stream"
done

section "erased players"
destroy_keys_again "$erasures"
(umask 077 && mkdir -p "$LOCAL_DIR" && cp "$erasures" "$PENDING_ERASURES")
print_next_steps "$(wc -l <"$erasures")"
