#!/usr/bin/env bash
# Every admin command of docs/self-hosting.md's "Admin commands in containers" table, run from
# the shipped binaries on PATH (not from a checkout) against a running stack, each with only the
# variables the table's "needs" column names; checks what each prints. Run by
# deploy/tests/getting_started.sh, in an empty environment (PATH, HOME, STACK_ENV: the running
# stack's stack.env), outside the checkout.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
page="$here/../../docs/self-hosting.md"
# shellcheck disable=SC1090  # the stack's own file
source "$STACK_ENV"

fail() {
    echo "admin commands: $*" >&2
    exit 1
}

# The commands this script runs; the table must list exactly these.
covered="query-api accounts create
query-api accounts list
query-api keys create
query-api keys list
query-api keys rotate
query-api keys revoke
query-api member create-owner
query-api member invite
query-api member list
query-api member set-role
query-api member set-password
query-api member remove
projector migrate
projector rebuild
projector parked list
projector parked retry"
documented="$(python3 - "$page" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
section = text.split("## Admin commands in containers", 1)[1].split("\n## ", 1)[0]
seen = []
for row in section.splitlines():
    if not row.startswith("| `"):
        continue
    first = row.split(" | ")[0]
    binary = None
    for span in re.findall(r"`([^`]*)`", first):
        words = span.replace("\\|", "|").split()
        if words[0] in ("query-api", "projector"):
            binary = words.pop(0)
        words = [w for w in words if re.fullmatch(r"[a-z][a-z-]*", w)][:2]
        if not words:
            continue  # a flag alone (`--all`)
        if binary == "projector" and words[:1] != ["parked"]:
            words = words[:1]
        seen.append(" ".join([binary] + words))
print("\n".join(dict.fromkeys(seen)))
PY
)"
[[ "$(sort <<<"$documented")" == "$(sort <<<"$covered")" ]] ||
    fail "the table's commands differ from those run here: $(diff <(sort <<<"$documented") <(sort <<<"$covered") || true)"

# with VAR... -- COMMAND...: COMMAND with only PATH, HOME and the named variables of the stack.
with() {
    local -a vars=(PATH="$PATH" HOME="$HOME")
    while [[ "$1" != -- ]]; do
        vars+=("$1=${!1}")
        shift
    done
    shift
    env -i "${vars[@]}" "$@"
}
pg=(DATABASE_URL)
pg_nats=(DATABASE_URL NATS_URL)
all=(DATABASE_URL NATS_URL PRIVACY_MASTER_KEY)

[[ "$(command -v query-api)" != */target/* ]] || fail "query-api comes from a checkout"
[[ "$PWD" != *"$(cd "$here/../.." && pwd)"* ]] || fail "running inside the checkout"

account="$(with "${pg_nats[@]}" -- query-api accounts create --name "Admin Commands")"
A="$(jq -re .id <<<"$account")" || fail "accounts create: $account"
with "${pg_nats[@]}" -- query-api accounts list |
    jq -e --arg a "$A" '[.. | objects | select(.id? == $a)] | length == 1' >/dev/null ||
    fail "accounts list lacks $A"

key="$(with "${pg_nats[@]}" -- query-api keys create --account "$A" --kind plugin --label lobby)"
KEY="$(jq -re .id <<<"$key")" || fail "keys create: $key"
jq -e '.key | startswith("wdn_plugin_")' <<<"$key" >/dev/null || fail "keys create: $key"
with "${pg_nats[@]}" -- query-api keys create --account "$A" --kind dashboard |
    jq -e '.key | startswith("wdn_dash_")' >/dev/null || fail "keys create --kind dashboard"
with "${pg_nats[@]}" -- query-api keys list --account "$A" |
    jq -e '[.. | objects | select(.key? | type == "string")] | length == 0' >/dev/null ||
    fail "keys list shows a secret"
rotated="$(with "${pg_nats[@]}" -- query-api keys rotate "$KEY" --grace-seconds 60)"
jq -e '.key | startswith("wdn_plugin_")' <<<"$rotated" >/dev/null || fail "keys rotate: $rotated"
with "${pg_nats[@]}" -- query-api keys revoke "$KEY" | jq -e . >/dev/null || fail "keys revoke"

owner="$(MEMBER_PASSWORD='a long passphrase here' with "${pg[@]}" MEMBER_PASSWORD -- \
    query-api member create-owner --account "$A" --login owner@admin.example --name Alex)"
jq -e '.role == "owner" and (has("password") | not)' <<<"$owner" >/dev/null ||
    fail "member create-owner: $owner"
second="$(with "${pg[@]}" -- query-api member create-owner --account "$A" --login second@admin.example)"
jq -e '.password | length >= 12' <<<"$second" >/dev/null ||
    fail "create-owner without MEMBER_PASSWORD prints no password: $second"
M="$(jq -re .id <<<"$second")" || fail "no member id: $second"
with "${pg[@]}" -- query-api member invite --account "$A" --login mod@admin.example --role moderator \
    --expires-in-seconds 3600 | jq -e '.path | startswith("/invite/wdn_invite_")' >/dev/null ||
    fail "member invite"
with "${pg[@]}" -- query-api member list --account "$A" | jq -e '.items | length == 2' >/dev/null ||
    fail "member list"
with "${pg[@]}" -- query-api member set-role --account "$A" "$M" --role admin |
    jq -e '.role == "admin"' >/dev/null || fail "member set-role"
MEMBER_PASSWORD='another long passphrase' with "${pg[@]}" MEMBER_PASSWORD -- \
    query-api member set-password --account "$A" "$M" |
    jq -e --arg m "$M" '.password_set == $m' >/dev/null || fail "member set-password"
with "${pg[@]}" -- query-api member remove --account "$A" "$M" |
    jq -e --arg m "$M" '.removed == $m' >/dev/null || fail "member remove"

# The projector's commands log their progress (LOG_FORMAT=pretty by default) and print
# tab-separated lines for parked messages.
with "${pg[@]}" -- projector migrate 2>&1 | grep -q 'migrations applied' || fail "projector migrate"
with "${pg[@]}" -- projector parked list >/dev/null || fail "projector parked list"
with "${all[@]}" -- projector parked retry --all >/dev/null || fail "projector parked retry --all"
with "${all[@]}" -- projector rebuild --no-progress 2>&1 | grep -q 'rebuild finished' ||
    fail "projector rebuild --no-progress"
echo "admin commands: ok" >&2
