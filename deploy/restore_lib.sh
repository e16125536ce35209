# shellcheck shell=bash
# The steps of deploy/restore.sh (sourced after deploy/lib.sh and deploy/backup_lib.sh).

# open_backup PATH WORK: prints the directory holding the backup (an archive is unpacked into
# WORK) once its manifest says it is complete and every part it lists is there.
open_backup() {
    local path="$1" work="$2" dir stream
    if [[ -d "$path" ]]; then
        dir="$path"
    elif [[ -f "$path" ]]; then
        dir="$work/backup"
        mkdir -p "$dir"
        tar -C "$dir" -xf "$path" || die "cannot unpack $path"
    else
        die "no backup at $path"
    fi
    [[ -f "$dir/manifest.json" ]] || die "$path has no manifest.json: not a complete backup of ./deploy/backup.sh"
    [[ "$(read_manifest "$dir" complete)" == True ]] || die "$path is not marked complete"
    [[ "$(read_manifest "$dir" format)" == "$BACKUP_FORMAT" ]] ||
        die "$path has backup format $(read_manifest "$dir" format); this script reads format $BACKUP_FORMAT"
    [[ -f "$dir/database.dump" ]] || die "$path lacks database.dump"
    while read -r stream; do
        [[ -f "$dir/streams/$stream/backup.json" ]] || die "$path lacks streams/$stream"
    done < <(read_manifest "$dir" streams | python3 -c 'import json, sys; print("\n".join(json.load(sys.stdin)))')
    log "backup of $(read_manifest "$dir" finished_at), Warden $(read_manifest "$dir" versions warden)"
    printf '%s\n' "$dir"
}

# Refuses while a Warden service may be running: the local stack's process, or any other client
# connected to the database (every service holds connections while it runs).
refuse_running_services() {
    local pid others
    if [[ "$DEPLOYMENT" == local ]] && pid="$(live_pid_from "$STACK_PID" /stack)"; then
        die "the local stack is running (pid $pid): stop it with ./deploy/down.sh and start only NATS and PostgreSQL with ./deploy/up.sh --infra-only"
    fi
    others="$(pg_query "SELECT count(*) || ' (' || coalesce(string_agg(DISTINCT coalesce(nullif(application_name, ''), host(client_addr), 'unix socket'), ', '), '') || ')'
        FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'")"
    [[ "$others" == "0 ()" ]] ||
        die "$others other connections to the database: stop every Warden service (and other clients) before a restore"
}

# erasure_lines FILE...: the "ACCOUNT<TAB>PLAYER" lines of the files (blank lines and # comments
# skipped), checked: anything else fails.
erasure_lines() {
    python3 - "$@" <<'PY' || die "unreadable erasures (see above)"
import re, sys
uuid = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
bad = False
for name in sys.argv[1:]:
    for number, line in enumerate(open(name), 1):
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) < 2 or not all(uuid.fullmatch(f.lower()) for f in fields[:2]):
            print(f'error: {name}:{number}: not "ACCOUNT_ID<TAB>PLAYER_UUID"', file=sys.stderr)
            bad = True
            continue
        print(f"{fields[0].lower()}\t{fields[1].lower()}")
sys.exit(1 if bad else 0)
PY
}

# collect_erasures BACKUP OUT [FILE...]: every player to erase again, into OUT: the backup's,
# the database's about to be replaced, and the files'.
collect_erasures() {
    local backup="$1" out="$2"
    shift 2
    {
        erasure_lines "$backup/erased-players.tsv"
        if [[ "$(pg_query "SELECT to_regclass('public.erased_players') IS NOT NULL")" == t ]]; then
            pg_query "COPY (SELECT account_id, player_uuid FROM erased_players) TO STDOUT"
        fi
        if (($# > 0)); then erasure_lines "$@"; fi
    } | sort -u >"$out"
    log "$(wc -l <"$out") erased players to erase again"
}

# install_secrets BACKUP FORCE: the local stack gets the backup's secrets.env (the log's sealed
# fields open only with its PRIVACY_MASTER_KEY); elsewhere the operator gives them to the services.
install_secrets() {
    local backup="$1" force="$2"
    if [[ ! -f "$backup/secrets.env" ]]; then
        warn "the backup holds no secrets.env: start the services with the secrets of the backed-up deployment (PRIVACY_MASTER_KEY above all)"
        return 0
    fi
    if [[ "$DEPLOYMENT" != local ]]; then
        log "start the services with the values of the backup's secrets.env (PRIVACY_MASTER_KEY above all)"
        return 0
    fi
    if [[ -f "$SECRETS_ENV" ]] && cmp -s "$SECRETS_ENV" "$backup/secrets.env"; then
        log "$SECRETS_ENV already holds the backup's secrets"
        return 0
    fi
    if [[ -f "$SECRETS_ENV" ]]; then
        [[ "$force" == true ]] ||
            die "$SECRETS_ENV differs from the backup's secrets.env; --force replaces it (the old one is kept as $SECRETS_ENV.before-restore)"
        mv "$SECRETS_ENV" "$SECRETS_ENV.before-restore"
    fi
    (umask 077 && cp "$backup/secrets.env" "$SECRETS_ENV")
    log "installed the backup's secrets as $SECRETS_ENV"
}

# restore_database BACKUP TABLES: empties the database when it holds TABLES > 0 tables (every
# schema but PostgreSQL's own, so no newer table survives beside the restored ones), then
# restores the dump in one transaction.
restore_database() {
    local backup="$1" tables="$2" schemas
    if ((tables > 0)); then
        schemas="$(pg_query "SELECT string_agg(quote_ident(nspname), ', ') FROM pg_namespace
            WHERE nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') AND nspname NOT LIKE 'pg_temp_%' AND nspname NOT LIKE 'pg_toast_temp_%'")"
        log "dropping the database's schemas ($schemas)"
        pg_query "SET client_min_messages = warning; DROP SCHEMA $schemas CASCADE; CREATE SCHEMA public;" >/dev/null
    fi
    log "pg_restore into $(redact_url "$DATABASE_URL")"
    "$PG_RESTORE" --no-owner --exit-on-error --single-transaction -d "$DATABASE_URL" "$backup/database.dump" ||
        die "pg_restore failed; the database was left as the failed transaction found it"
}

# check_restored_stream BACKUP STREAM: the restored stream holds exactly the backup's messages
# and sequences (the read models' checkpoints are stream sequences).
check_restored_stream() {
    local backup="$1" stream="$2"
    nats_cli stream info "$stream" --json | python3 -c '
import json, sys
state = json.load(sys.stdin)["state"]
want = json.loads(sys.argv[2])
got = {"messages": state.get("messages", 0), "first_seq": state.get("first_seq", 0),
       "last_seq": state.get("last_seq", 0)}
expected = {k: want.get(k) or 0 for k in got}
if not got["messages"]:
    got.pop("first_seq"); expected.pop("first_seq")
if got != expected:
    sys.exit(f"error: restored stream {sys.argv[1]} holds {got}, the backup {expected}")
print(f"==> {sys.argv[1]}: {got}", file=sys.stderr)' "$stream" "$(read_manifest "$backup" streams "$stream")"
}

# destroy_keys_again FILE: purges the data key of every listed player from the players' key
# bucket (the restored bucket may hold keys an erasure had destroyed).
destroy_keys_again() {
    local file="$1" account player found=0
    while IFS=$'\t' read -r account player; do
        if nats_cli kv get "${PRIVACY_BUCKET}_PLAYERS" "p.$account.$player" --raw >/dev/null 2>&1; then
            nats_cli kv purge "${PRIVACY_BUCKET}_PLAYERS" "p.$account.$player" -f >/dev/null
            found=$((found + 1))
        fi
    done <"$file"
    log "destroyed again $found data keys the restored bucket held for erased players"
}

print_next_steps() {
    local count="$1" home=""
    [[ -n "${WARDEN_HOME:-}" ]] && home="WARDEN_HOME=$WARDEN_HOME "
    cat <<EOF

The backup is restored. Next:
  1. start the services with the same secrets$([[ "$DEPLOYMENT" == local ]] && printf ' (%s./deploy/up.sh --detach)' "$home");
  2. once they answer, erase again the $count erased players (the read models too):
       $home./deploy/restore.sh --erase-again
     (their data keys are already destroyed; the list is kept in $PENDING_ERASURES).
Anything written after the backup was made is not in it.
EOF
}

# erase_again_now [FILE...]: with the services running, POSTs the admin API's erase for every
# player erased in the database, noted by the restore, or in FILE; then checks their keys are gone.
erase_again_now() {
    local list account player status i ok=0 unknown=0 failed=0
    [[ -n "${BASE_URL:-}" && -n "${ADMIN_KEY:-}" ]] || die "--erase-again needs BASE_URL and ADMIN_KEY"
    for ((i = 0; i < 240; i++)); do
        [[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$BASE_URL/readyz" || true)" == 200 ]] && break
        sleep 0.5
    done
    ((i < 240)) || die "$BASE_URL/readyz did not answer 200 within 120 s: start the services first"
    list="$(mktemp)"
    {
        pg_query "COPY (SELECT account_id, player_uuid FROM erased_players) TO STDOUT"
        [[ -f "$PENDING_ERASURES" ]] && erasure_lines "$PENDING_ERASURES"
        if (($# > 0)); then erasure_lines "$@"; fi
    } | sort -u >"$list"
    while IFS=$'\t' read -r account player; do
        status="$(curl -s -o /dev/null -w '%{http_code}' --max-time 30 -X POST \
            -H "Authorization: Bearer $ADMIN_KEY" \
            "$BASE_URL/api/admin/accounts/$account/players/$player/erase" || true)"
        case "$status" in
        200 | 202) ok=$((ok + 1)) ;;
        404) unknown=$((unknown + 1)) ;; # never seen by the restored data: nothing to scrub
        *)
            warn "erasing $player of account $account answered ${status:-no response}"
            failed=$((failed + 1))
            ;;
        esac
        if nats_cli kv get "${PRIVACY_BUCKET}_PLAYERS" "p.$account.$player" --raw >/dev/null 2>&1; then
            warn "the data key of $player (account $account) is still in KV_${PRIVACY_BUCKET}_PLAYERS"
            failed=$((failed + 1))
        fi
    done <"$list"
    rm -f "$list"
    log "erased again: $ok; unknown to the restored data: $unknown; failed: $failed"
    ((failed == 0)) || die "some erasures failed; run ./deploy/restore.sh --erase-again again"
    rm -f "$PENDING_ERASURES"
}
