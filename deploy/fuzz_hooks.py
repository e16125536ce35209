"""Schemathesis hooks for deploy/fuzz.sh (loaded through SCHEMATHESIS_HOOKS).

The quotas are real (contract section 4: 60 requests per dashboard key and 30 per client IP in
any 60 s), and a fuzzer sends thousands of requests in a few minutes. Rather than a switch that
weakens the limiter, the run spreads its requests over many keys and client addresses:

- FUZZ_KEYS: comma-separated keys of one kind; each request takes the next one, round robin
  (fuzz.sh creates enough that no key reaches its quota). Empty for the public endpoints.
- Every request names a made-up client address in X-Forwarded-For. The fuzz stack lists
  127.0.0.1 in TRUSTED_PROXIES, so the public quota counts each request against its own address.

A 429 would only hide the handler behind the limiter: it is no finding, but also no test.
"""

import itertools
import os
import random
import threading

import schemathesis

_KEYS = [key for key in os.environ.get("FUZZ_KEYS", "").split(",") if key]
_NEXT_KEY = itertools.cycle(_KEYS) if _KEYS else None
_LOCK = threading.Lock()


# refresh_interval=None: no caching, so every case asks for (and gets) the next key.
@schemathesis.auth(refresh_interval=None)
class RotatingKeys:
    def get(self, case, context):
        with _LOCK:
            key = next(_NEXT_KEY) if _NEXT_KEY is not None else None
        # 198.18.0.0/15 is reserved for benchmarking: never a real client.
        client = f"198.18.{random.randrange(256)}.{random.randrange(1, 255)}"
        return key, client

    def set(self, case, data, context):
        key, client = data
        if case.headers is None:
            case.headers = {}
        if key is not None:
            case.headers["Authorization"] = f"Bearer {key}"
        case.headers["X-Forwarded-For"] = client
