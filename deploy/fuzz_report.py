"""Sorts schemathesis's findings for deploy/fuzz.sh: any finding of any check fails the run.

    fuzz_report.py STACK_LOG REPORT_DIR KIND...

Reads REPORT_DIR/KIND.ndjson (every case, its checks and the request and response) and
REPORT_DIR/KIND.json (the run's totals) for each KIND. Prints:
- each run's case count and the statuses it got (a 429 there would mean a quota hid handlers);
- every case answered with a 5xx (`not_a_server_error`): the request and the response;
- errors of the tool itself (a run that could not test an operation);
- a summary of every other check's findings, by check and operation: mismatches between the
  document and the service (an undocumented status or content type, a schema that admits what
  validation refuses, a response that does not match its schema). The document is exact, so
  each of them is a defect of the document or of the service.
- the stack's WARN and ERROR log lines, counted (a 5xx's cause is logged once, the body never
  names it; a projector that stalls says why).
Exits 1 when any check found anything or the tool could not test everything, else 0.
"""

import base64
import collections
import json
import sys

SERVER_ERROR_CHECK = "not_a_server_error"
EXAMPLES_PER_FINDING = 3
TEXT_LIMIT = 600


def decoded(payload):
    """The text of a recorded body: JSON-escaped, so NUL and control characters stay visible."""
    if payload is None:
        return ""
    if isinstance(payload, dict) and "$base64" in payload:
        raw = base64.b64decode(payload["$base64"])
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return f"<{len(raw)} bytes, not UTF-8: {raw[:80]!r}>"
        text = json.dumps(text, ensure_ascii=True)[1:-1]
    else:
        text = json.dumps(payload, ensure_ascii=True)
    return text if len(text) <= TEXT_LIMIT else text[:TEXT_LIMIT] + f"... ({len(text)} chars)"


def read_run(path):
    """Every finished scenario as (phase, recorder), and the tool's own errors."""
    finished, errors = [], []
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            event = json.loads(line)
            if "ScenarioFinished" in event:
                scenario = event["ScenarioFinished"]
                finished.append((scenario.get("phase"), scenario["recorder"]))
            elif "NonFatalError" in event:
                error = event["NonFatalError"]
                errors.append(f"{error.get('label')} ({error.get('phase')}): {error['value'].get('message')}")
            elif "FatalError" in event:
                errors.append(f"fatal: {json.dumps(event['FatalError'])[:TEXT_LIMIT]}")
    return finished, errors


def print_log_problems(stack_log):
    """The stack's WARN and ERROR lines, counted: a 5xx's cause, or a projector that stalled."""
    counts = collections.Counter()
    try:
        with open(stack_log, encoding="utf-8", errors="replace") as lines:
            for line in lines:
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if entry.get("level") in ("WARN", "ERROR"):
                    fields = ("level", "target", "message", "error", "status")
                    counts[json.dumps({k: entry[k] for k in fields if k in entry})[:TEXT_LIMIT]] += 1
    except OSError as error:
        print(f"\n(no stack log: {error})")
        return
    if counts:
        print("\n--- the stack's WARN and ERROR log lines ---")
        for text, count in counts.most_common():
            print(f"{count:6} x {text}")


def main():
    stack_log, report_dir, kinds = sys.argv[1], sys.argv[2], sys.argv[3:]
    server_errors = []
    tool_errors = []
    others = collections.defaultdict(list)  # (check, code, title, operation) -> messages
    cases_total = 0
    for kind in kinds:
        try:
            with open(f"{report_dir}/{kind}.json", encoding="utf-8") as file:
                totals = json.load(file)
        except (OSError, ValueError) as error:
            tool_errors.append(f"{kind}: no report ({error})")
            continue
        cases = totals["test_cases"]["generated"]
        cases_total += cases
        print(f"{kind}: {cases} cases over {totals['operations']['tested']} operations "
              f"in {totals['running_time']:.0f} s ({totals['stop_reason']})")
        if not totals.get("complete", False):
            tool_errors.append(f"{kind}: the run did not complete ({totals['stop_reason']})")
        finished, errors = read_run(f"{report_dir}/{kind}.ndjson")
        tool_errors.extend(f"{kind}: {error}" for error in errors)
        statuses = collections.Counter(
            (interaction.get("response") or {}).get("status_code", "no response")
            for _, recorder in finished
            for interaction in recorder.get("interactions", {}).values()
        )
        print(f"  answers: {', '.join(f'{status} x{n}' for status, n in sorted(statuses.items(), key=str))}")
        for phase, recorder in finished:
            for case_id, checks in recorder.get("checks", {}).items():
                interaction = recorder.get("interactions", {}).get(case_id) or {}
                for check in checks:
                    if check["status"] != "failure":
                        continue
                    failure = check.get("failure_info", {}).get("failure", {})
                    if check["name"] == SERVER_ERROR_CHECK:
                        server_errors.append((kind, phase, failure, interaction))
                    else:
                        key = (check["name"], failure.get("code"), failure.get("title"), failure.get("operation"))
                        others[key].append(failure.get("message", ""))
    print(f"total: {cases_total} cases")

    if others:
        print("\n--- other findings (the document and the service disagree) ---")
        for (check, code, title, operation), messages in sorted(others.items(), key=lambda item: item[0]):
            first = next((m for m in messages if m), "").replace("\n", "; ")
            first = first if len(first) <= 160 else first[:160] + "..."
            print(f"{code} {title} [{check}] {operation}: {len(messages)} case(s){': ' + first if first else ''}")

    if tool_errors:
        print("\n--- the fuzzer could not test everything ---")
        for error in tool_errors:
            print(error)

    if server_errors:
        print(f"\n--- {len(server_errors)} case(s) answered with a server error ---")
        seen = collections.Counter()
        for kind, phase, failure, interaction in server_errors:
            request, response = interaction.get("request", {}), interaction.get("response") or {}
            operation = failure.get("operation", "?")
            seen[operation] += 1
            if seen[operation] > EXAMPLES_PER_FINDING:
                continue
            print(f"\n[{kind}, {phase}] {operation}")
            print(f"  request:  {request.get('method')} {request.get('uri')}")
            if request.get("body") is not None:
                print(f"  body:     {decoded(request.get('body'))}")
            print(f"  response: {response.get('status_code')} {decoded(response.get('content'))}")
        for operation, count in seen.items():
            if count > EXAMPLES_PER_FINDING:
                print(f"\n({operation}: {count - EXAMPLES_PER_FINDING} more not shown)")
    print_log_problems(stack_log)
    return 1 if server_errors or tool_errors or others else 0


if __name__ == "__main__":
    sys.exit(main())
