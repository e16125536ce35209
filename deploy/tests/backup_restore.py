"""The HTTP side of deploy/tests/backup_restore.sh: writes through the real APIs, records every
read, and compares after a restore. Standard library only.

    backup_restore.py STATE write           plugin writes, a second member, an alert destination
    backup_restore.py STATE erase NAME      erases player NAME through the admin API
    backup_restore.py STATE wait            until the projector has applied the whole log
    backup_restore.py STATE record OUT      every read, into OUT (JSON)
    backup_restore.py STATE compare OUT     the reads equal OUT (waits for the projector first)
    backup_restore.py STATE after-restore   members sign in, keys work, erased stay erased, a
                                            write after the restore is readable
    backup_restore.py STATE erased NAME...  those players read as erased, their words nowhere
    backup_restore.py STATE uuid NAME       prints player NAME's UUID

STATE is a JSON file (created by `write`) next to the stack's stack.env, whose values
(BASE_URL, keys, the owner's login) come from the environment.
"""

import json
import os
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

BASE = os.environ["BASE_URL"]
ADMIN = os.environ["ADMIN_KEY"]
ACCOUNT = os.environ["ACCOUNT_ID"]
PLUGIN = os.environ["PLUGIN_KEY"]
DASHBOARD = os.environ["DASHBOARD_KEY"]
OWNER = (os.environ["DASHBOARD_LOGIN"], os.environ["DASHBOARD_PASSWORD"])
SECOND = ("second.mod@backup.test", "second-member-password-1")
SERVER = "5f0c8a52-8d1e-4c3e-9a55-2f1d8c1b0a01"
# Players: a kept one, one erased before the first backup, one erased between the backups.
PLAYERS = {
    "kept": ("0b5c9a1e-3c47-4d7a-9e10-6a1f2c3d4e01", "KeptPlayer"),
    "early": ("0b5c9a1e-3c47-4d7a-9e10-6a1f2c3d4e02", "EarlyErasedName"),
    "late": ("0b5c9a1e-3c47-4d7a-9e10-6a1f2c3d4e03", "LateErasedName"),
}
STAFF = ("0b5c9a1e-3c47-4d7a-9e10-6a1f2c3d4e09", "StaffMember")
T0 = "2026-01-02T03:04:05Z"


class Http:
    """One client: a session cookie when signed in, Origin on POSTs, no redirects followed."""

    def __init__(self, cookie=None):
        self.cookie = cookie

    def call(self, method, path, key=None, body=None, form=None, expect=None):
        headers = {}
        data = None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if form is not None:
            data = urllib.parse.urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
            headers["Origin"] = BASE
        if self.cookie:
            headers["Cookie"] = self.cookie
        for _ in range(10):
            request = urllib.request.Request(BASE + path, data=data, method=method, headers=headers)
            try:
                with NO_REDIRECT.open(request, timeout=30) as response:
                    status, answer, got = response.status, response.read(), response.headers
            except urllib.error.HTTPError as error:
                status, answer, got = error.code, error.read(), error.headers
            if status == 429:  # a quota: wait exactly as long as the server says
                time.sleep(int(got.get("Retry-After", "1")))
                continue
            break
        for value in got.get_all("Set-Cookie") or []:
            pair = value.split(";", 1)[0]
            if "session" in pair.split("=", 1)[0]:
                self.cookie = pair
        if expect is not None and status not in expect:
            sys.exit(f"{method} {path} answered {status}: {answer[:500]!r}")
        return status, answer


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


NO_REDIRECT = urllib.request.build_opener(NoRedirect)
HTTP = Http()


def api(method, path, key, body=None, expect=(200,)):
    status, answer = HTTP.call(method, path, key=key, body=body, expect=expect)
    return json.loads(answer) if answer else None


def plugin(path, records):
    answer = api("POST", path, PLUGIN, records, expect=(202,))
    assert answer.get("rejected", []) == [], answer
    return answer


def sign_in(login, password):
    browser = Http()
    status, answer = browser.call("POST", "/login", form={"login": login, "password": password})
    if status != 303 or not browser.cookie:
        sys.exit(f"{login} could not sign in: {status} {answer[:300]!r}")
    return browser


def write(state_path):
    kept, early, late = PLAYERS["kept"], PLAYERS["early"], PLAYERS["late"]
    plugin("/api/plugin/heartbeat", {"server_id": SERVER, "tps": 19.5, "player_count": 3,
                                     "max_players": 100, "name": "Lobby", "version": "Paper 1.21.4",
                                     "timestamp": T0})
    sessions = []
    for i, (player, name) in enumerate((kept, early, late, STAFF)):
        sessions.append({"server_id": SERVER, "player_uuid": player, "player_name": name,
                         "event": "join", "at": f"2026-01-02T03:1{i}:00Z", "ip": f"203.0.113.{i + 1}"})
        sessions.append({"server_id": SERVER, "player_uuid": player, "player_name": name,
                         "event": "quit", "at": f"2026-01-02T03:3{i}:00Z"})
    plugin("/api/plugin/sessions", sessions)
    chat = [{"server_id": SERVER, "player_uuid": player, "player_name": name, "entry_type": "chat",
             "message": f"words of {name} {i}", "channel": "global",
             "sent_at": f"2026-01-02T03:2{i}:0{i}Z"}
            for player, name in (kept, early, late) for i in range(3)]
    plugin("/api/plugin/chat", chat)
    plugin("/api/plugin/punishments", [
        {"server_id": SERVER, "player_uuid": player, "player_name": name, "type": kind,
         "reason": f"reason for {name}", "staff_uuid": STAFF[0], "staff_name": STAFF[1],
         "issued_at": "2026-01-02T03:25:00Z", "source_plugin": "litebans",
         "external_id": f"lb-{name}"}
        for (player, name), kind in ((kept, "warning"), (early, "ban"), (late, "mute"))])
    # A flag's detail is no personal field (it stays readable after an erasure): no name in it.
    plugin("/api/plugin/anticheat-flags", [
        {"server_id": SERVER, "player_uuid": player, "player_name": name, "check_name": "Reach",
         "check_type": "A", "violation_level": 3.5, "detail": "reach 3.4 blocks",
         "source_plugin": "grim", "flagged_at": "2026-01-02T03:26:00Z"}
        for player, name in (kept, early, late)])
    # Offline at its last heartbeat: the reads stay the same however long the test takes.
    plugin("/api/plugin/heartbeat", {"server_id": SERVER, "tps": 20.0, "player_count": 0,
                                     "max_players": 100, "name": "Lobby", "version": "Paper 1.21.4",
                                     "timestamp": "2026-01-02T03:40:00Z", "online": False})

    invite = api("POST", f"/api/admin/accounts/{ACCOUNT}/invites", ADMIN,
                 {"login": SECOND[0], "role": "moderator", "expires_in_seconds": 3600}, expect=(201,))
    second = Http()
    second.call("POST", invite["path"], form={"display_name": "Second Mod", "password": SECOND[1],
                                              "password_confirm": SECOND[1]}, expect=(303,))
    api("POST", f"/api/admin/accounts/{ACCOUNT}/destinations", ADMIN,
        {"kind": "webhook", "url": "http://127.0.0.1:9/warden-hook", "name": "ops"}, expect=(201,))
    owner = sign_in(*OWNER)
    with open(state_path, "w") as out:
        json.dump({"owner_cookie": owner.cookie}, out)


def erase(name):
    player = PLAYERS[name][0]
    answer = api("POST", f"/api/admin/accounts/{ACCOUNT}/players/{player}/erase", ADMIN,
                 expect=(200, 202))
    print(f"erased {name} ({player}): {answer['status']}")


def audit_rows(html):
    body = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0] if "<tbody>" in html else ""
    return [re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", row)).strip()
            for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)]


def record(state):
    reads = {}
    for name, (player, _) in PLAYERS.items():
        for suffix in ("", "/punishments", "/flags", "/chatlog", "/notes"):
            reads[f"{name}{suffix}"] = api("GET", f"/api/players/{player}{suffix}", DASHBOARD)
    for path in ("/api/servers", "/api/staff", "/api/chat", "/api/punishments", "/api/flags",
                 f"/api/players/{STAFF[0]}"):
        reads[path] = api("GET", path, DASHBOARD)
    for path in ("accounts", f"accounts/{ACCOUNT}/members", f"accounts/{ACCOUNT}/destinations",
                 f"accounts/{ACCOUNT}/settings", f"accounts/{ACCOUNT}/privacy"):
        reads[f"admin/{path}"] = api("GET", f"/api/admin/{path}", ADMIN)
    keys = api("GET", f"/api/admin/accounts/{ACCOUNT}/keys", ADMIN)
    # When a key was last used changes with every read; which keys exist must not.
    reads["admin/keys"] = [{k: v for k, v in key.items() if k != "last_used_at"}
                           for key in keys["items"]]
    # The owner's session from before the backup: sessions are restored with the database.
    owner = Http(state["owner_cookie"])
    status, html = owner.call("GET", "/audit")
    reads["page /audit"] = [status, audit_rows(html.decode())]
    for page in ("/", f"/players/{PLAYERS['kept'][0]}", "/team", "/settings", "/alerts",
                 f"/servers/{SERVER}"):
        reads[f"page {page}"] = owner.call("GET", page)[0]
    return reads


def wait_applied():
    """Until /readyz says every partition's checkpoint is at the stream's end."""
    deadline = time.time() + 120
    while time.time() < deadline:
        status, answer = HTTP.call("GET", "/readyz")
        lag = re.findall(rb'"lag_messages":\s*(\d+)', answer)
        if status == 200 and lag and all(int(n) == 0 for n in lag):
            return
        time.sleep(0.2)
    sys.exit(f"the projector did not catch up within 120 s: {answer[:800]!r}")


def compare(state, recorded_path):
    wait_applied()
    with open(recorded_path) as recorded:
        want = json.load(recorded)
    got = record(state)
    differ = [key for key in want if want[key] != got.get(key)]
    for key in differ:
        print(f"differs: {key}\n  before: {json.dumps(want[key])[:1500]}\n  after:  "
              f"{json.dumps(got.get(key))[:1500]}", file=sys.stderr)
    if differ or set(got) != set(want):
        sys.exit(f"{len(differ)} reads differ after the restore")
    print(f"all {len(want)} recorded reads are identical")


def erased(names):
    wait_applied()
    everything = []
    for name in names:
        player, player_name = PLAYERS[name]
        lookup = api("GET", f"/api/players/{player}", DASHBOARD)
        assert lookup["erased_at"] and lookup["username"] is None, lookup
        chat = api("GET", f"/api/players/{player}/chatlog", DASHBOARD)
        assert all(not item.get("message") for item in chat["items"]), chat
        everything += [json.dumps(lookup), json.dumps(chat)]
    for path in ("/api/chat", "/api/punishments", "/api/flags", "/api/staff"):
        everything.append(json.dumps(api("GET", path, DASHBOARD)))
    text = "\n".join(everything)
    for name in names:
        player_name = PLAYERS[name][1]
        for word in (player_name, f"words of {player_name}", f"reason for {player_name}"):
            assert word not in text, f"{word!r} is readable after the restore"
    print(f"erased and unreadable: {', '.join(names)}")


def after_restore():
    for login, password in (OWNER, SECOND):
        browser = sign_in(login, password)
        status, _ = browser.call("GET", "/")
        assert status == 200, (login, status)
    api("GET", "/api/servers", DASHBOARD)
    marker = f"written after the restore {uuid.uuid4()}"
    player, name = PLAYERS["kept"]
    plugin("/api/plugin/chat", {"server_id": SERVER, "player_uuid": player, "player_name": name,
                                "entry_type": "chat", "message": marker, "channel": "global"})
    deadline = time.time() + 60
    while time.time() < deadline:
        chat = api("GET", f"/api/players/{player}/chatlog", DASHBOARD)
        if any(item.get("message") == marker for item in chat["items"]):
            print("both members signed in; the keys work; a write after the restore is readable")
            return
        time.sleep(0.5)
    sys.exit("the write after the restore never became readable")


def main():
    state_path, command, *args = sys.argv[1:]
    if command == "uuid":
        print(PLAYERS[args[0]][0])
        return
    if command == "write":
        write(state_path)
        return
    with open(state_path) as saved:
        state = json.load(saved)
    if command == "erase":
        erase(args[0])
    elif command == "wait":
        wait_applied()
    elif command == "record":
        wait_applied()
        with open(args[0], "w") as out:
            json.dump(record(state), out, indent=1, sort_keys=True)
    elif command == "compare":
        compare(state, args[0])
    elif command == "after-restore":
        after_restore()
    elif command == "erased":
        erased(args)
    else:
        sys.exit(f"unknown command {command}")


if __name__ == "__main__":
    main()
