# shellcheck shell=bash
# The documented outcome of each `sh` block of docs/getting-started.md, sourced by the runner
# deploy/tests/doc_blocks.py writes (deploy/tests/getting_started.sh). check_block_<n> runs right
# after block n, in the same shell: it sees the block's variables and its output, $OUT/<n>.out
# (with `HTTP_STATUS <code>` lines from curl).

# The page's number of `sh` blocks: a block added or removed needs its check here.
EXPECTED_BLOCKS=9
# The server of the page's heartbeat.
HEARTBEAT_SERVER=3f0c8a43-1d5e-4b8e-9a51-0f6f3c2d9b10

fail() {
    echo "block $BLOCK: $*" >&2
    return 1
}

# statuses N: the HTTP statuses block N's curl calls answered, space-separated.
statuses() { sed -n 's/^HTTP_STATUS \([0-9]*\)$/\1/p' "$OUT/$1.out" | paste -sd' '; }

# objects N: every JSON value block N printed, one per line.
objects() { grep -v '^HTTP_STATUS' "$OUT/$1.out" | jq -c .; }

expect_statuses() {
    local got
    got="$(statuses "$BLOCK")"
    [[ "$got" == "$*" ]] || fail "HTTP statuses '$got', the page says '$*'"
}

is_uuid() { [[ "$1" =~ ^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$ ]]; }

# Polls COMMAND (a string for eval) for up to 60 s until it succeeds.
within_a_minute() {
    local i
    for ((i = 0; i < 120; i++)); do
        eval "$1" >/dev/null 2>&1 && return 0
        sleep 0.5
    done
    return 1
}

check_block_2() {
    expect_statuses 201
    is_uuid "$ACCOUNT" || fail "ACCOUNT is '$ACCOUNT', not an account id"
    objects 2 | jq -e 'select(.name == "My Network")' >/dev/null || fail "no account printed"
}

check_block_3() {
    local created
    created="$(objects 3 | head -n 1)"
    jq -e '.name == "My Network" and (.id | length == 36)' <<<"$created" >/dev/null ||
        fail "accounts create printed $created"
    # The list holds both accounts just created.
    for id in "$ACCOUNT" "$(jq -r .id <<<"$created")"; do
        objects 3 | tail -n +2 | jq -e --arg id "$id" '[.. | objects | select(.id? == $id)] | length == 1' \
            >/dev/null || fail "accounts list lacks $id"
    done
}

check_block_4() {
    expect_statuses 201
    [[ "$PLUGIN_KEY" == wdn_plugin_* ]] || fail "PLUGIN_KEY is '$PLUGIN_KEY'"
}

check_block_5() {
    local out
    out="$(objects 5 | jq -s -c .)"
    # The two keys created (secrets printed once), the list, the rotation and the revocation.
    jq -e '.[0].kind == "plugin" and (.[0].key | startswith("wdn_plugin_"))' <<<"$out" >/dev/null ||
        fail "keys create --kind plugin printed ${out:0:300}"
    jq -e '.[1].kind == "dashboard" and (.[1].key | startswith("wdn_dash_"))' <<<"$out" >/dev/null ||
        fail "keys create --kind dashboard printed ${out:0:300}"
    DASHBOARD_KEY="$(jq -r '.[1].key' <<<"$out")"
    jq -e '[.[2] | .. | objects | select(.label? == "discord-bot" or .label? == "lobby")] | length >= 3' \
        <<<"$out" >/dev/null || fail "keys list lacks the keys: ${out:0:600}"
    is_uuid "$KEY_ID" || fail "KEY_ID is '$KEY_ID'"
    [[ "$(jq 'length' <<<"$out")" == 5 ]] || fail "expected 5 JSON outputs: ${out:0:600}"
    # The revoked key is listed as revoked.
    query-api keys list --account "$ACCOUNT" |
        jq -e --arg id "$KEY_ID" '[.. | objects | select(.id? == $id)][0] | (.revoked_at // .revoked) != null' \
            >/dev/null || fail "key $KEY_ID is not listed as revoked"
}

check_block_6() {
    expect_statuses 201
    # The owner signs in with the password (from the same origin, as the sign-in form does).
    local headers
    headers="$(command curl -s -o /dev/null -D - -c "$OUT/cookies" -H "Origin: $BASE_URL" \
        --data-urlencode login=owner@example.com \
        --data-urlencode 'password=a long passphrase here' "$BASE_URL/login")"
    grep -q '^HTTP/1.1 303' <<<"$headers" || fail "sign-in answered: $headers"
    grep -qi '^location: /\s*$' <<<"$headers" || fail "sign-in did not lead to /: $headers"
    local wrong
    wrong="$(command curl -s -o /dev/null -w '%{http_code}' -H "Origin: $BASE_URL" \
        --data-urlencode login=owner@example.com \
        --data-urlencode 'password=not the passphrase' "$BASE_URL/login")"
    [[ "$wrong" == 401 ]] || fail "a wrong password answered $wrong"
}

check_block_7() { fail "block 7 is marked as not run"; }

check_block_8() {
    expect_statuses 201
    local paths path code
    paths="$(objects 8 | jq -r '.path')"
    [[ "$(wc -l <<<"$paths")" == 2 ]] || fail "expected two invites: $paths"
    # Each invite link opens the page where the person chooses a name and password.
    while read -r path; do
        [[ "$path" == /invite/wdn_invite_* ]] || fail "invite path '$path'"
        code="$(command curl -s -o "$OUT/invite.html" -w '%{http_code}' "$BASE_URL$path")"
        [[ "$code" == 200 ]] || fail "GET $path answered $code"
        grep -qi 'password' "$OUT/invite.html" || fail "the invite page asks for no password"
    done <<<"$paths"
}

check_block_9() {
    expect_statuses 202
    objects 9 | jq -e '.accepted == 1 and .duplicates == 0 and .rejected == []' >/dev/null ||
        fail "the heartbeat's answer: $(objects 9)"
    # The server shows in the API (dashboard key) and on the Servers page (the owner).
    within_a_minute "command curl -sf -H 'Authorization: Bearer $DASHBOARD_KEY' '$BASE_URL/api/servers' |
        jq -e '[.. | objects | select(.server_id? == \"$HEARTBEAT_SERVER\" or .id? == \"$HEARTBEAT_SERVER\")] | length > 0'" ||
        fail "server $HEARTBEAT_SERVER not in GET /api/servers: $(command curl -s -H "Authorization: Bearer $DASHBOARD_KEY" "$BASE_URL/api/servers")"
    local code
    code="$(command curl -s -b "$OUT/cookies" -o "$OUT/servers.html" -w '%{http_code}' "$BASE_URL/servers")"
    [[ "$code" == 200 ]] || fail "the owner's GET /servers answered $code"
    grep -q 'Lobby' "$OUT/servers.html" || fail "the Servers page does not show Lobby"
}
