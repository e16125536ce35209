#!/usr/bin/env python3
"""A webhook receiver for the alert tests: verifies every delivery with `standardwebhooks`.

The signature check is the reference implementation from PyPI (`standardwebhooks` 1.1.0),
not Warden's own code, so a test passes only if Warden signs the way the Standard Webhooks
specification says. Every request is recorded (webhook-id, event type, verified or the
verification error, arrival time, the answer given, the body parsed and as raw bytes) and appended to a JSON-lines
log file, which a restarted receiver reads back: "down for a while, then back" keeps history.

Control, over HTTP on the same port (the tests' harness: tests/support/src/webhook_receiver.rs):
  GET  /_control/health            {"name": ...}: the receiver named --name is up
  POST /_control/config            {"secrets"?: [..], "mode"?: "ok" | "fail" | "hang"}
  GET  /_control/received          {"requests": [...]} (all recorded so far, in arrival order)
  POST /_control/clear             forgets what was recorded (memory and log file)
Modes: `ok` answers 200, `fail` answers 503, `hang` never answers: it holds the connection
until the client gives up (closes it), the way a stuck endpoint does.

Run: receiver.py --port PORT --name NAME --log FILE [--secret S ...] [--mode ok|fail|hang]
"""

import argparse
import base64
import json
import select
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook

MODES = ("ok", "fail", "hang")
# The largest body read; a delivery is a few kilobytes.
MAX_BODY = 4 * 1024 * 1024
# How often a hanging handler looks whether the client gave up.
HANG_POLL_SECONDS = 0.05


class State:
    """What the receiver was told (secrets, mode) and what it received; shared by threads."""

    def __init__(self, name, log_path, secrets, mode):
        self.name = name
        self.log_path = log_path
        self.lock = threading.Lock()
        self.secrets = list(secrets)
        self.mode = mode
        self.requests = load_log(log_path)

    def config(self):
        with self.lock:
            return {"name": self.name, "secrets": list(self.secrets), "mode": self.mode}

    def configure(self, update):
        secrets = update.get("secrets")
        mode = update.get("mode")
        if secrets is not None and not (
            isinstance(secrets, list) and all(isinstance(s, str) and s for s in secrets)
        ):
            raise ValueError("secrets must be a list of non-empty strings")
        if mode is not None and mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}")
        with self.lock:
            if secrets is not None:
                self.secrets = list(secrets)
            if mode is not None:
                self.mode = mode
        return self.config()

    def current(self):
        with self.lock:
            return list(self.secrets), self.mode

    def record(self, entry):
        with self.lock:
            entry["seq"] = len(self.requests) + 1
            self.requests.append(entry)
            # One line per request, flushed at once: a kill -9 of the receiver loses at most
            # the line being written (load_log skips a torn line).
            with open(self.log_path, "a", encoding="utf-8") as log:
                log.write(json.dumps(entry) + "\n")

    def received(self):
        with self.lock:
            return list(self.requests)

    def clear(self):
        with self.lock:
            self.requests = []
            open(self.log_path, "w", encoding="utf-8").close()


def load_log(path):
    requests = []
    try:
        with open(path, encoding="utf-8") as log:
            for line in log:
                try:
                    requests.append(json.loads(line))
                except ValueError:
                    continue
    except FileNotFoundError:
        pass
    return requests


def verify(secrets, body, headers):
    """(verified, error): the reference library's verdict under any of the given secrets."""
    if not secrets:
        return False, "the receiver was given no secret"
    errors = []
    for secret in secrets:
        try:
            Webhook(secret).verify(body, headers, json_parse=False)
            return True, None
        except Exception as error:  # noqa: BLE001 - every failure is a verdict to record
            errors.append(f"{type(error).__name__}: {error}")
    return False, "; ".join(sorted(set(errors)))


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "WebhookReceiver/1"

    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        pass

    def do_GET(self):
        state = self.server.state
        if self.path == "/_control/health":
            self.answer(200, state.config())
        elif self.path == "/_control/received":
            self.answer(200, {"requests": state.received()})
        else:
            self.answer(404, {"error": "not found"})

    def do_POST(self):
        state = self.server.state
        arrived_at = time.time()
        try:
            body = self.read_body()
        except ValueError as error:
            self.answer(400, {"error": str(error)})
            return
        if self.path == "/_control/config":
            try:
                self.answer(200, state.configure(json.loads(body or b"{}")))
            except ValueError as error:
                self.answer(400, {"error": str(error)})
        elif self.path == "/_control/clear":
            state.clear()
            self.answer(200, {"cleared": True})
        elif self.path.startswith("/_control/"):
            self.answer(404, {"error": "not found"})
        else:
            self.delivery(state, arrived_at, body)

    def delivery(self, state, arrived_at, body):
        secrets, mode = state.current()
        headers = {key.lower(): value for key, value in self.headers.items()}
        verified, error = verify(secrets, body, headers)
        text = body.decode("utf-8", errors="replace")
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        entry = {
            "path": self.path,
            "webhook_id": headers.get("webhook-id"),
            "webhook_timestamp": headers.get("webhook-timestamp"),
            "webhook_signature": headers.get("webhook-signature"),
            "user_agent": headers.get("user-agent"),
            "content_type": headers.get("content-type"),
            "type": parsed.get("type") if isinstance(parsed, dict) else None,
            "verified": verified,
            "error": error,
            "received_at": arrived_at,
            "mode": mode,
            "body": parsed if parsed is not None else text,
            # The bytes exactly as received, for checks that need them (a signature).
            "raw_body_b64": base64.b64encode(body).decode("ascii"),
        }
        if mode == "hang":
            entry["status"] = None
            # Recorded before holding on, so a test sees the attempt while it hangs.
            state.record(entry)
            self.hang()
            return
        status = 200 if mode == "ok" else 503
        entry["status"] = status
        state.record(entry)
        self.answer(status, {"received": True} if status == 200 else {"error": "failing"})

    def hang(self):
        """Holds the connection without answering until the client closes it."""
        conn = self.connection
        while not self.server.stopping.is_set():
            readable, _, _ = select.select([conn], [], [], HANG_POLL_SECONDS)
            if not readable:
                continue
            try:
                if not conn.recv(1, socket.MSG_PEEK):
                    break
            except OSError:
                break
            # The client sent more (a pipelined request?): nothing to do but keep holding.
            time.sleep(HANG_POLL_SECONDS)
        self.close_connection = True

    def read_body(self):
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            chunks = []
            total = 0
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    # Trailers, up to the blank line.
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                total += size
                if total > MAX_BODY:
                    raise ValueError("body too large")
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("content-length") or 0)
        if length > MAX_BODY:
            raise ValueError("body too large")
        return self.rfile.read(length) if length else b""

    def answer(self, status, payload):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address, state):
        super().__init__(address, Handler)
        self.state = state
        self.stopping = threading.Event()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--name", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--secret", action="append", default=[])
    parser.add_argument("--mode", choices=MODES, default="ok")
    args = parser.parse_args()
    state = State(args.name, args.log, args.secret, args.mode)
    server = Server((args.host, args.port), state)
    print(f"listening on {args.host}:{args.port}", flush=True)
    try:
        server.serve_forever(poll_interval=0.05)
    except KeyboardInterrupt:
        pass
    finally:
        server.stopping.set()
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
