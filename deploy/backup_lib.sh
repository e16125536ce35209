# shellcheck shell=bash
# shellcheck disable=SC2034  # the names below are used by the scripts that source this file
# Helpers sourced by deploy/backup.sh and deploy/restore.sh (after deploy/lib.sh): which
# deployment, its tools, and the manifest.json of a backup.

BACKUP_FORMAT=1

# Sets DEPLOYMENT (local or environment), NATS_URL, DATABASE_URL, EVENT_STREAM, PRIVACY_BUCKET
# and KEY_BUCKET, and for the local stack BASE_URL and ADMIN_KEY from its stack.env. NATS_URL
# and DATABASE_URL from the environment win (both or neither).
load_deployment() {
    local env_nats="${NATS_URL:-}" env_db="${DATABASE_URL:-}"
    if [[ -n "$env_nats" && -n "$env_db" ]]; then
        DEPLOYMENT=environment
    elif [[ -n "$env_nats" || -n "$env_db" ]]; then
        die "set both NATS_URL and DATABASE_URL (another deployment), or neither (the local stack's $STACK_ENV)"
    else
        [[ -f "$STACK_ENV" ]] ||
            die "no NATS_URL and DATABASE_URL in the environment, and no local stack ($STACK_ENV is missing; WARDEN_HOME picks another stack)"
        DEPLOYMENT=local
        # shellcheck source=/dev/null
        source "$STACK_ENV"
        [[ -n "${NATS_URL:-}" && -n "${DATABASE_URL:-}" ]] || die "$STACK_ENV lacks NATS_URL or DATABASE_URL"
    fi
    EVENT_STREAM="${EVENT_STREAM:-GS_EVENTS}"
    PRIVACY_BUCKET="${PRIVACY_BUCKET:-GS_PRIVACY}"
    KEY_BUCKET="${KEY_BUCKET:-GS_KEYS}"
    export NATS_URL DATABASE_URL
}

# A URL without its password, for messages.
redact_url() {
    sed -E 's#(://[^:/@]*):[^@]*@#\1:***@#' <<<"$1"
}

# Sets NATS_CLI (natscli), PG_DUMP, PG_RESTORE and PSQL: PostgreSQL's newest installed client
# (pg_dump must be at least the server's major version), else the ones on PATH.
require_backup_tools() {
    if [[ -n "${NATS_CLI:-}" ]]; then
        [[ -x "$NATS_CLI" ]] || die "NATS_CLI=$NATS_CLI is not an executable"
    else
        ensure_natscli_installed
        NATS_CLI="$NATSCLI_BIN"
    fi
    local dir tool
    dir="$(find_pg_bin || true)"
    for tool in pg_dump pg_restore psql; do
        if [[ -n "$dir" && -x "$dir/$tool" ]]; then
            printf -v "${tool^^}" '%s' "$dir/$tool"
        elif command -v "$tool" >/dev/null 2>&1; then
            printf -v "${tool^^}" '%s' "$(command -v "$tool")"
        else
            die "$tool is missing (install PostgreSQL's client tools, e.g. apt-get install postgresql-client)"
        fi
    done
}

# natscli against $NATS_URL (named explicitly, so a selected natscli context does not redirect it).
nats_cli() {
    "$NATS_CLI" --server "$NATS_URL" "$@"
}

# pg_query SQL: prints the rows of SQL, unaligned, from $DATABASE_URL.
pg_query() {
    "$PSQL" -X -q -At -v ON_ERROR_STOP=1 -d "$DATABASE_URL" -c "$1"
}

# The names of every stream on $NATS_URL, one a line.
list_streams() {
    nats_cli stream ls --names
}

check_reachable() {
    pg_query "SELECT 1" >/dev/null || die "PostgreSQL at $(redact_url "$DATABASE_URL") does not answer"
    list_streams >/dev/null || die "NATS at $(redact_url "$NATS_URL") does not answer (or natscli cannot list its streams)"
}

# backup_info DIR: natscli's summary of a stream backup (JSON: messages, first_seq, last_seq, ...).
backup_info() {
    "$NATS_CLI" backup info "$1" --json --no-progress
}

# write_manifest DIR STARTED_AT CHECKPOINT STREAM...: DIR/manifest.json. Fails when a read
# model's checkpoint is past the backed-up log's last sequence (the order went wrong).
write_manifest() {
    local dir="$1" started="$2" checkpoint="$3" stream info
    shift 3
    : >"$dir/streams.jsonl"
    for stream in "$@"; do
        info="$(backup_info "$dir/streams/$stream")" || die "nats backup info of $stream failed"
        printf '{"stream": "%s", "info": %s}\n' "$stream" "$(tr -d '\n' <<<"$info")" >>"$dir/streams.jsonl"
    done
    python3 - "$dir" "$started" "$checkpoint" "$EVENT_STREAM" "$BACKUP_FORMAT" \
        "$(warden_version)" "$("$NATS_CLI" --version 2>&1)" "$("$PG_DUMP" --version)" \
        "$(pg_query 'SHOW server_version')" "$(nats_server_version)" "$(redact_url "$NATS_URL")" \
        "$(redact_url "$DATABASE_URL")" <<'PY'
import datetime, json, os, sys
(dir_, started, checkpoint, event_stream, fmt, warden, natscli, pg_dump, pg_server, nats_server,
 nats_url, database_url) = sys.argv[1:]
streams = {}
with open(os.path.join(dir_, "streams.jsonl")) as lines:
    for line in lines:
        entry = json.loads(line)
        info = entry["info"]
        streams[entry["stream"]] = {
            "directory": f"streams/{entry['stream']}",
            "messages": info.get("messages"),
            "first_seq": info.get("first_seq"),
            "last_seq": info.get("last_seq"),
            "bytes": info.get("bytes"),
        }
os.remove(os.path.join(dir_, "streams.jsonl"))
last = streams[event_stream]["last_seq"] or 0
if int(checkpoint) > last:
    sys.exit(f"error: a read model's checkpoint ({checkpoint}) is past the log's last sequence "
             f"({last}); the database must be backed up before the log")
manifest = {
    "format": int(fmt),
    "complete": True,
    "started_at": started,
    "finished_at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    "versions": {"warden": warden, "natscli": natscli, "pg_dump": pg_dump,
                 "postgresql": pg_server, "nats_server": nats_server},
    "sources": {"nats_url": nats_url, "database_url": database_url},
    "event_stream": event_stream,
    "database": {"file": "database.dump", "format": "pg_dump -Fc",
                 "highest_checkpoint": int(checkpoint),
                 "erased_players": "erased-players.tsv"},
    "streams": streams,
    "secrets": "secrets.env" if os.path.exists(os.path.join(dir_, "secrets.env")) else None,
}
with open(os.path.join(dir_, "manifest.json"), "w") as out:
    json.dump(manifest, out, indent=2)
    out.write("\n")
PY
}

# The workspace's version (Cargo.toml), with the git commit when this is a checkout.
warden_version() {
    local version commit
    version="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version *= *"\(.*\)"/\1/p' "$REPO_ROOT/Cargo.toml" | head -n 1)"
    commit="$(git -C "$REPO_ROOT" rev-parse --short HEAD 2>/dev/null || true)"
    printf '%s%s\n' "${version:-unknown}" "${commit:+ ($commit)}"
}

# The version of the nats-server natscli is connected to (`nats account info`), or "unknown".
nats_server_version() {
    local version
    version="$(nats_cli account info 2>/dev/null | sed -n 's/^ *Connected Server Version: *//p' | head -n 1)"
    printf '%s\n' "${version:-unknown}"
}

# read_manifest DIR KEY...: prints manifest.json's value at KEY (a path of keys).
read_manifest() {
    python3 - "$@" <<'PY'
import json, sys
value = json.load(open(sys.argv[1] + "/manifest.json"))
for key in sys.argv[2:]:
    value = value[key]
print(value if not isinstance(value, (dict, list)) else json.dumps(value))
PY
}
