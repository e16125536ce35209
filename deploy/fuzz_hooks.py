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
  in the last year (retention covers at most 400 cohorts). The default run draws them here, in
  every spelling RFC 3339 admits (`t`/`z` in either case, any offset, a fraction of 1 to 12
  digits, a leap second); the strict run (FUZZ_STRICT=1) keeps schemathesis's own `date-time`
  values and only moves their date into the window, spelling, time of day and offset unchanged;
- values schemathesis reuses from earlier answers are not drawn here: an appeal link's
  `expires_at` (`POST /api/plugin/appeal-links`) lies 30 days ahead, and once reused as another
  record's time it is out of that record's window. In positive cases of the default run, every
  `date-time` later than now is moved into the window as the strict run moves them;
- `from` before `to` (the events list and funnels), and a punishment's `expires_at` after its
  `issued_at`: cross-field rules, repaired in positive cases;
- a trend's range (`POST /api/v1/trends`) holds at most 744 hours, 366 days or 106 weeks by
  its `bucket`, and `from` (with `to` absent: now) must be before it: a positive case that
  breaks either loses its `from` (which then defaults to a short span before `to`);
- a retention question's `from` (with `to` absent: today) must not be after today: a positive
  case that breaks it loses its `from`;
- a funnel's `dropped_off.step` lies between 1 and its number of steps less one, and its `from`
  (with `to` absent: now) must be before now: a positive case that breaks either gets the
  step clamped, or loses its `from`;
- `cursor`: opaque, only the API makes one (`next_cursor`); positive cases leave it out;
- the action feed's `wait` (`GET /api/plugin/actions`, a long-poll): positive cases ask for 0,
  and every other case that names no `wait` gets 0 too, so that a case with no action waiting
  answers at once rather than after up to 30 s;
- NUL and unpaired surrogates in a custom event's `properties`: the document spells the rule out
  three levels deep, but schemathesis 4.32 drops that pattern ("Unsupported regex patterns":
  its validator's regex engine cannot hold a surrogate), so it generates values outside it;
  both runs remove them (below);
- ids that must name existing objects (an alert rule's `destinations`), a batch accepted in
  part, an absent optional body: `filter_failure` below.

Every positive case's query and body are assigned back (a copy) even when unchanged: that makes
schemathesis check the case against the schema again and label it by the result, since its
4.32 coverage phase labels some refused values positive (`""` for a nullable `date-time`).

Nothing else is repaired: an integer may come as `2.0` (JSON Schema's `integer` admits it, and
every decoder takes it), a batch has the document's `maxItems`, strings their lengths and
patterns. The strict run (deploy/fuzz.sh's second pass, FUZZ_STRICT=1) is the check that the
document alone says what is accepted: its hooks do only what is listed above.
"""

import copy
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
STRICT = os.environ.get("FUZZ_STRICT") == "1"


def _rfc3339(seconds, offset, fraction, upper, plus_zero, leap):
    """A time `seconds` before now, at offset `offset` minutes, in one of RFC 3339's spellings;
    with `leap`, the last second of that UTC day spelt as a leap second (`23:59:60Z`)."""
    at = _NOW - datetime.timedelta(seconds=seconds)
    if leap:
        return f"{(at - datetime.timedelta(days=1)).date().isoformat()}T23:59:60Z"
    at = at.astimezone(datetime.timezone(datetime.timedelta(minutes=offset)))
    text = at.strftime("%Y-%m-%dT%H:%M:%S") + fraction
    if offset == 0 and not plus_zero:
        zone = "Z"
    else:
        sign = "-" if offset < 0 else "+"
        zone = f"{sign}{abs(offset) // 60:02d}:{abs(offset) % 60:02d}"
    text += zone
    return text if upper else text.lower()


if not STRICT:
    # Upper case and `Z` first: schemathesis's coverage phase takes the simplest draw.
    schemathesis.openapi.format(
        "date-time",
        st.builds(
            _rfc3339,
            st.integers(60, 30 * 86400),
            st.integers(-(23 * 60 + 59), 23 * 60 + 59),
            st.just("") | st.text(alphabet="0123456789", min_size=1, max_size=12).map(".".__add__),
            st.sampled_from([True, False]),
            st.sampled_from([False, True]),
            st.sampled_from([False, True]),
        ),
    )

# A `date` (retention's cohort range) lies in the last year, so any two of them span at most
# 366 daily cohorts, inside the 400-cohort limit (a cross-field rule the schema cannot say).
schemathesis.openapi.format(
    "date",
    st.builds(lambda days: (_NOW - datetime.timedelta(days=days)).date().isoformat(), st.integers(0, 365)),
)


# A `date-time` as schemathesis spells it (any year): its date is moved into the window.
_DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}(?=[Tt]\d{2}:\d{2}:\d{2})")


def _into_window(value):
    """Moves the date of every `date-time` string in `value` to 2..29 days ago (strict run)."""
    if isinstance(value, str):
        if _DATE_TIME.match(value):
            day = (_NOW - datetime.timedelta(days=random.randrange(2, 30))).date().isoformat()
            return _DATE_TIME.sub(day, value, count=1)
        return value
    if isinstance(value, list):
        return [_into_window(v) for v in value]
    if isinstance(value, dict):
        return {k: _into_window(v) for k, v in value.items()}
    return value


def _not_ahead(value):
    """Moves every `date-time` in `value` that lies after now (one reused from an answer, such as
    an appeal link's expiry) into the window; the others stay as drawn."""
    if isinstance(value, str):
        if not _DATE_TIME.match(value):
            return value
        try:
            ahead = _parse_time(value) > _NOW
        except (ValueError, OverflowError):
            return value
        return _into_window(value) if ahead else value
    if isinstance(value, list):
        return [_not_ahead(v) for v in value]
    if isinstance(value, dict):
        return {k: _not_ahead(v) for k, v in value.items()}
    return value


def _parse_time(text):
    """A `date-time` as Python reads it: any case, `Z`, and a leap second as the next second."""
    text = text.upper().replace("Z", "+00:00")
    leap = text[17:19] == "60"
    if leap:
        text = text[:17] + "59" + text[19:]
    return datetime.datetime.fromisoformat(text) + datetime.timedelta(seconds=1 if leap else 0)


def _ordered(record, earlier, later):
    """Swaps two times of a record so that `earlier` < `later` (ISO strings of one window)."""
    if not isinstance(record, dict):
        return
    a, b = record.get(earlier), record.get(later)
    if isinstance(a, str) and isinstance(b, str):
        try:
            ta, tb = _parse_time(a), _parse_time(b)
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
    try:
        start = _parse_time(body["from"])
        to = body.get("to")
        end = _parse_time(to) if isinstance(to, str) else _NOW
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
    step = dropped.get("step") if isinstance(dropped, dict) else None
    # `6.0` is a step too (JSON Schema's `integer`); the clamped step keeps its spelling's type.
    if isinstance(steps, list) and isinstance(step, (int, float)) and not isinstance(step, bool):
        dropped["step"] = type(step)(max(1, min(step, len(steps) - 1)))
    if isinstance(body.get("from"), str) and not isinstance(body.get("to"), str):
        try:
            start = _parse_time(body["from"])
        except ValueError:
            return
        if not start < _NOW - datetime.timedelta(minutes=1):
            body.pop("from")


def _retention(body):
    """Drops a retention question's `from` that lies after today when `to` is absent (today)."""
    if not isinstance(body, dict) or not isinstance(body.get("from"), str) or isinstance(body.get("to"), str):
        return
    try:
        start = datetime.date.fromisoformat(body["from"])
    except ValueError:
        return
    if start > _NOW.date():
        body.pop("from")


# NUL and unpaired surrogates: PostgreSQL cannot store them, so ingest refuses a custom event
# whose `properties` hold one in any string or key (422; contract section 1). The document
# spells the rule out for three levels only (a schema referring to itself is more than the
# fuzzer generates from), and schemathesis drops even that pattern (see the module docs).
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
    if case.path == "/api/plugin/actions":
        # Every case of the long-poll, negative ones too: a valid wait becomes 0; an invalid one
        # (the case's point) stays, and is refused at once.
        query = dict(case.query) if isinstance(case.query, dict) else {}
        wait = query.get("wait", 0)
        if isinstance(wait, int) and not isinstance(wait, bool) and 0 <= wait <= 30:
            query["wait"] = 0
        case.query = query
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return case
    # Every container is assigned back (a copy), even unchanged: schemathesis then checks the
    # case against the schema again and labels it by the result. Its 4.32 coverage phase labels
    # some values positive that the schema refuses (`""` for a nullable `date-time`), and a
    # refused request is then a false finding.
    if isinstance(case.query, dict):
        query = copy.deepcopy(case.query)
        query.pop("cursor", None)
        query = _into_window(query) if STRICT else _not_ahead(query)
        _ordered(query, "from", "to")
        if case.path == "/api/plugin/actions":
            query["wait"] = 0
        case.query = query
    if case.body is not None and not isinstance(case.body, (str, bytes)):
        body = _into_window(case.body) if STRICT else _not_ahead(copy.deepcopy(case.body))
        records = body if isinstance(body, list) else [body]
        for record in records:
            _ordered(record, "from", "to")
            _ordered(record, "issued_at", "expires_at")
        if case.path == "/api/v1/plugin/events":
            for record in records:
                if isinstance(record, dict) and "properties" in record:
                    record["properties"] = _storable(record["properties"])
        if case.path == "/api/v1/trends":
            _trend_range(body)
        if case.path == "/api/v1/funnels":
            _funnel(body)
        if case.path == "/api/v1/retention":
            _retention(body)
        case.body = body
    return case


@schemathesis.hook
def filter_failure(context, failure, case, response):
    """Keeps every failure but three: a batch accepted in part, an absent optional body, and an
    alert rule naming destinations that do not exist.

    A batch holding some invalid records breaks the batch schema, yet the service stores the
    valid ones and lists the others in `rejected` (202; contract section 1). The action feed's
    acknowledgements (`POST /api/plugin/actions/acks`) are such a batch inside an object: its
    `results`. Only such a 202, with a non-empty `rejected`, is not a finding.

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
    acks = case.path == "/api/plugin/actions/acks" and isinstance(case.body, dict)
    if not isinstance(case.body, list) and not acks:
        return True
    try:
        rejected = response.json().get("rejected")
    except (ValueError, AttributeError):
        return True
    return not rejected
