"""Schemathesis hooks for deploy/fuzz.sh (loaded through SCHEMATHESIS_HOOKS).

The quotas are real (contract section 4: 60 requests per dashboard key and 30 per client IP in
any 60 s), and a fuzzer sends thousands of requests in a few minutes. Rather than a switch that
weakens the limiter, the run spreads its requests over many keys and client addresses:

- FUZZ_KEYS: comma-separated keys of one kind; each request takes the next one, round robin
  (fuzz.sh creates enough that no key reaches its quota). Empty for the public endpoints.
- Every request names a made-up client address in X-Forwarded-For. The fuzz stack lists
  127.0.0.1 in TRUSTED_PROXIES, so the public quota counts each request against its own address.

A 429 would only hide the handler behind the limiter: it is no finding, but also no test.

The document is exact where JSON Schema can say it (the fuzz fails on any finding, including a
schema-valid request that is refused). What it cannot say is kept out of the schema-valid
(positive) cases here, one rule each, and documented in the fields' descriptions:

- time windows relative to now: a record's time lies between 2000-01-01T00:00:00Z and 10 minutes
  ahead of the server's clock; queries and expiries between 1970 (2000) and 9999. Every
  `date-time` the fuzzer writes lies in the last 30 days, inside every window, and every `date`
  in the last year (retention covers at most 400 cohorts);
- `from` before `to` (the events list and funnels), and a punishment's `expires_at` after its
  `issued_at`: cross-field rules, repaired in positive cases;
- a trend's range (`POST /api/v1/trends`) holds at most 744 hours, 366 days or 106 weeks by
  its `bucket`, and `from` (with `to` absent: now) must be before it: a positive case that
  breaks either loses its `from` (which then defaults to a short span before `to`);
- a funnel's `dropped_off.step` lies between 1 and its number of steps less one, and its `from`
  (with `to` absent: now) must be before now: a positive case that breaks either gets the
  step clamped, or loses its `from`;
- `cursor`: opaque, only the API makes one (`next_cursor`); positive cases leave it out;
- integers are written without a fraction (`2`, not `2.0`): JSON Schema's `integer` admits both
  and schemathesis sends both for a JSON body; positive cases send the plain spelling.
"""

import datetime
import re
import itertools
import os
import random
import threading

import schemathesis
from schemathesis.core import NotSet
from hypothesis import strategies as st

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


_NOW = datetime.datetime.now(datetime.timezone.utc)
# Whole seconds or microseconds, `Z` or an offset: the spellings RFC 3339 allows.
schemathesis.openapi.format(
    "date-time",
    st.builds(
        lambda seconds, micros, offset: (_NOW - datetime.timedelta(seconds=seconds, microseconds=micros))
        .astimezone(datetime.timezone(datetime.timedelta(minutes=offset)))
        .isoformat()
        .replace("+00:00", "Z"),
        st.integers(60, 30 * 86400),
        st.sampled_from([0, 123456]),
        st.sampled_from([0, 60, -330]),
    ),
)

# A `date` (retention's cohort range) lies in the last year, so any two of them span at most
# 366 daily cohorts, inside the 400-cohort limit (a cross-field rule the schema cannot say).
schemathesis.openapi.format(
    "date",
    st.builds(lambda days: (_NOW - datetime.timedelta(days=days)).date().isoformat(), st.integers(0, 365)),
)


def _plain_integers(value):
    """`2.0` -> `2`, everywhere in a JSON body."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, list):
        return [_plain_integers(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain_integers(v) for k, v in value.items()}
    return value


def _ordered(record, earlier, later):
    """Swaps two times of a record so that `earlier` < `later` (ISO strings of one window)."""
    if not isinstance(record, dict):
        return
    a, b = record.get(earlier), record.get(later)
    if isinstance(a, str) and isinstance(b, str):
        parse = datetime.datetime.fromisoformat
        try:
            ta, tb = parse(a.replace("Z", "+00:00")), parse(b.replace("Z", "+00:00"))
        except ValueError:
            return
        if ta > tb:
            record[earlier], record[later] = b, a
        elif ta == tb:
            record.pop(earlier)


# Longest trend range per bucket, less the two buckets the widening to whole buckets may add
# and a margin for the server's clock running ahead of _NOW.
_TREND_SPANS = {
    "hour": datetime.timedelta(days=30),
    "day": datetime.timedelta(days=360),
    "week": datetime.timedelta(weeks=100),
}


def _trend_range(body):
    """Drops a trend's `from` when its range is too long for the bucket, or not before `to`."""
    if not isinstance(body, dict) or not isinstance(body.get("from"), str):
        return
    parse = datetime.datetime.fromisoformat
    try:
        start = parse(body["from"].replace("Z", "+00:00"))
        to = body.get("to")
        end = parse(to.replace("Z", "+00:00")) if isinstance(to, str) else _NOW
        bucket = body.get("bucket") if body.get("bucket") in _TREND_SPANS else "day"
        refused = not start < end - datetime.timedelta(minutes=1) or end - start > _TREND_SPANS[bucket]
    except (ValueError, TypeError):
        return
    if refused:
        body.pop("from")


def _funnel(body):
    """Clamps `dropped_off.step` into 1..steps-1 and drops a `from` not before `to` (or now)."""
    if not isinstance(body, dict):
        return
    steps, dropped = body.get("steps"), body.get("dropped_off")
    if isinstance(steps, list) and isinstance(dropped, dict) and isinstance(dropped.get("step"), int):
        dropped["step"] = max(1, min(dropped["step"], len(steps) - 1))
    if isinstance(body.get("from"), str) and not isinstance(body.get("to"), str):
        try:
            start = datetime.datetime.fromisoformat(body["from"].replace("Z", "+00:00"))
        except ValueError:
            return
        if not start < _NOW - datetime.timedelta(minutes=1):
            body.pop("from")


# NUL and unpaired surrogates: PostgreSQL cannot store them, so ingest refuses a custom event
# whose `properties` hold one in any string or key (422; contract section 1). The document
# spells the rule out for three levels only (a schema referring to itself is more than the
# fuzzer generates from), and the fuzzer's boundary cases do not always follow it.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _storable(value):
    """Removes NUL and unpaired surrogates from every string and key of `value`."""
    if isinstance(value, str):
        return _UNSTORABLE.sub("", value)
    if isinstance(value, list):
        return [_storable(v) for v in value]
    if isinstance(value, dict):
        return {_storable(k): _storable(v) for k, v in value.items()}
    return value


@schemathesis.hook
def map_case(context, case):
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return case
    if isinstance(case.query, dict):
        case.query.pop("cursor", None)
        _ordered(case.query, "from", "to")
    if case.body is not None and not isinstance(case.body, (str, bytes)):
        case.body = _plain_integers(case.body)
        for record in case.body if isinstance(case.body, list) else [case.body]:
            _ordered(record, "from", "to")
            _ordered(record, "issued_at", "expires_at")
        if case.path == "/api/v1/plugin/events":
            for record in case.body if isinstance(case.body, list) else [case.body]:
                if isinstance(record, dict) and "properties" in record:
                    record["properties"] = _storable(record["properties"])
        if case.path == "/api/v1/trends":
            _trend_range(case.body)
        if case.path == "/api/v1/funnels":
            _funnel(case.body)
    return case


@schemathesis.hook
def filter_failure(context, failure, case, response):
    """Keeps every failure but three: a batch accepted in part, an absent optional body, and an
    alert rule naming destinations that do not exist.

    A batch holding some invalid records breaks the batch schema, yet the service stores the
    valid ones and lists the others in `rejected` (202; contract section 1). Only such a 202,
    with a non-empty `rejected`, is not a finding.

    An alert rule's `destinations` must be the account's own (422 `unknown_destination`): the
    document cannot say which ids exist, so a schema-valid rule naming made-up ids is refused
    rightly. Only a 422 whose every error is `unknown_destination` is not a finding.
    """
    if getattr(failure, "code", None) == "ST202" and response.status_code == 422:
        try:
            errors = response.json().get("errors") or []
        except (ValueError, AttributeError):
            return True
        return not errors or any(e.get("code") != "unknown_destination" for e in errors)
    if getattr(failure, "code", None) != "ST201":
        return True
    # Schemathesis 4.32 may draw a "negative" body as no body at all; where the document makes
    # the body optional (key rotation), that request is valid, and accepting it is right.
    absent = case.body is None or isinstance(case.body, NotSet)
    if absent and response.status_code == 201 and case.path.endswith("/rotate"):
        return False
    if response.status_code != 202:
        return True
    if not isinstance(case.body, list):
        return True
    try:
        rejected = response.json().get("rejected")
    except (ValueError, AttributeError):
        return True
    return not rejected
