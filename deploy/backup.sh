#!/usr/bin/env bash
# Backs up a running Warden into a directory, or a tar archive: PostgreSQL first (pg_dump -Fc of
# the whole database), then the event log stream, then the privacy key buckets (natscli's
# `nats backup stream`, once `nats stream backup`), then the secrets file; and a manifest.json
# saying what, when, which versions and which stream sequences. Warden keeps running. Restore
# with ./deploy/restore.sh.
#
#   ./deploy/backup.sh [--secrets FILE | --no-secrets] [--with-key-bucket] DEST
#
#   DEST               a directory to create (it must not exist), or a file ending in .tar or
#                      .tar.gz to write instead; written under DEST.partial first and moved into
#                      place only once every part succeeded
#   --secrets FILE     the secrets file to include (default: the local stack's secrets.env;
#                      required when NATS_URL and DATABASE_URL come from the environment)
#   --no-secrets       include no secrets file (keep the secrets backed up elsewhere)
#   --with-key-bucket  also back up the API key bucket (KEY_BUCKET; query-api refills it from
#                      PostgreSQL, so it is optional)
#
# Which deployment: NATS_URL and DATABASE_URL from the environment when both are set (any
# deployment; natscli's own variables such as NATS_CREDS, NATS_USER and NATS_PASSWORD apply),
# else the local stack's stack.env (.local/, or $WARDEN_HOME). EVENT_STREAM, PRIVACY_BUCKET and
# KEY_BUCKET name the stream and buckets as the services' configuration does (defaults
# GS_EVENTS, GS_PRIVACY, GS_KEYS). NATS_CLI names a natscli binary to use; without it natscli
# v0.5.0 is built into .local/bin with Go when missing.
set -euo pipefail

# shellcheck source=deploy/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=deploy/backup_lib.sh
source "$(dirname "$0")/backup_lib.sh"

secrets_file=""
no_secrets=false
with_key_bucket=false
dest=""
while (($# > 0)); do
    case "$1" in
    --secrets)
        (($# > 1)) || die "--secrets needs a file"
        secrets_file="$2"
        shift
        ;;
    --no-secrets) no_secrets=true ;;
    --with-key-bucket) with_key_bucket=true ;;
    -h | --help)
        sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
        exit 0
        ;;
    -*) die "unknown argument: $1 (see --help)" ;;
    *)
        [[ -z "$dest" ]] || die "one destination only (see --help)"
        dest="$1"
        ;;
    esac
    shift
done
[[ -n "$dest" ]] || die "no destination given (see --help)"
[[ ! -e "$dest" ]] || die "$dest exists; a backup never overwrites one (choose a new name)"
[[ ! -e "$dest.partial" ]] || die "$dest.partial exists (left by a failed backup?); remove it first"
archive=false
case "$dest" in *.tar | *.tar.gz | *.tgz) archive=true ;; esac

load_deployment
if [[ "$no_secrets" == true ]]; then
    [[ -z "$secrets_file" ]] || die "--secrets and --no-secrets exclude each other"
elif [[ -z "$secrets_file" ]]; then
    [[ "$DEPLOYMENT" == local ]] ||
        die "NATS_URL and DATABASE_URL come from the environment: say which secrets file to include (--secrets FILE), or --no-secrets"
    secrets_file="$SECRETS_ENV"
fi
if [[ -n "$secrets_file" ]]; then
    [[ -f "$secrets_file" && -r "$secrets_file" ]] || die "secrets file $secrets_file is missing or unreadable"
    grep -q '^PRIVACY_MASTER_KEY=.' "$secrets_file" ||
        die "$secrets_file holds no PRIVACY_MASTER_KEY: without it the restored log's personal fields cannot be read"
fi
require_backup_tools
check_reachable
grep -qx "$EVENT_STREAM" <<<"$(list_streams)" ||
    die "no stream $EVENT_STREAM on $(redact_url "$NATS_URL") (is EVENT_STREAM right? have the services ever run?)"

work="$dest.partial"
finished=false
cleanup() {
    if [[ "$finished" != true ]]; then
        rm -rf "$work" "$work.tar"
        printf 'error: the backup failed; nothing was written to %s\n' "$dest" >&2
    fi
}
trap cleanup EXIT
(umask 077 && mkdir -p "$work/streams")
started_at="$(date -u +%FT%TZ)"

# 1. PostgreSQL: every checkpoint in this dump is at or before the log backed up next.
section "PostgreSQL"
log "pg_dump -Fc of $(redact_url "$DATABASE_URL")"
"$PG_DUMP" -Fc -f "$work/database.dump" "$DATABASE_URL"
pg_query "SELECT coalesce(max(last_sequence), 0) FROM projection_checkpoints" >"$work/checkpoint.txt" ||
    die "cannot read projection_checkpoints (is this a Warden database?)"
# The players erased so far: ./deploy/restore.sh erases them again (a key bucket is restored
# from the same moment, but keeping the list lets a restore of an older backup erase them too).
pg_query "COPY (SELECT account_id, player_uuid FROM erased_players ORDER BY 1, 2) TO STDOUT" \
    >"$work/erased-players.tsv"

# 2. The event log, then 3. the key buckets: an erasure destroys the key before it appends its
# record, so every erasure this log holds is also missing from the buckets saved after it.
section "event log and key buckets"
streams=("$EVENT_STREAM")
mapfile -t privacy < <(list_streams | grep "^KV_${PRIVACY_BUCKET}_" || true)
((${#privacy[@]} > 0)) || die "no key bucket KV_${PRIVACY_BUCKET}_* on $NATS_URL (is PRIVACY_BUCKET right?)"
streams+=("${privacy[@]}")
if [[ "$with_key_bucket" == true ]]; then
    streams+=("KV_$KEY_BUCKET")
fi
for stream in "${streams[@]}"; do
    # natscli's stream snapshot (`nats backup stream`, formerly `nats stream backup`); the
    # services' consumers are ordered ones, re-created at start, so none is saved.
    log "nats backup stream $stream"
    nats_cli backup stream "$stream" "$work/streams/$stream" --no-progress --no-consumers >/dev/null
    [[ -f "$work/streams/$stream/backup.json" ]] || die "nats stream backup $stream wrote no backup.json"
done

# 4. The secrets.
if [[ -n "$secrets_file" ]]; then
    (umask 077 && cp "$secrets_file" "$work/secrets.env")
fi

write_manifest "$work" "$started_at" "$(cat "$work/checkpoint.txt")" "${streams[@]}"
rm -f "$work/checkpoint.txt"
chmod -R go-rwx "$work"

if [[ "$archive" == true ]]; then
    compress=()
    [[ "$dest" == *.tar ]] || compress=(-z)
    (umask 077 && tar -C "$work" "${compress[@]}" -cf "$work.tar" .)
    mv "$work.tar" "$dest"
    rm -rf "$work"
else
    mv "$work" "$dest"
fi
finished=true
log "backup complete: $dest"
log "it holds the secrets and the keys that open every player's personal fields: store it encrypted"
