#!/usr/bin/env python3
"""The `sh` blocks of a Markdown page, for deploy/tests/getting_started.sh.

  doc_blocks.py PAGE --first
      prints the page's first `sh` block
  doc_blocks.py PAGE --runner --local-dir DIR --checks FILE
      prints a bash script that runs every `sh` block after the first, in order, in one shell:
      `.local/` replaced by DIR, curl also writing `HTTP_STATUS <code>` to stderr, each block's
      output in $OUT/<n>.out, and `check_block_<n>` (from FILE) called after block n. Blocks
      preceded by a `<!-- not run by deploy/tests/getting_started.sh ... -->` comment are
      skipped. FILE sets EXPECTED_BLOCKS: the page's number of `sh` blocks.
"""

import argparse
import shlex
import sys

SKIP_MARK = "<!-- not run by deploy/tests/getting_started.sh"


def blocks(text):
    """[(number, skipped, body)] of every ```sh block, numbered from 1."""
    out = []
    lines = text.splitlines()
    i = 0
    skip_next = False
    while i < len(lines):
        line = lines[i]
        if line.startswith(SKIP_MARK):
            skip_next = True
        elif line.strip() == "```sh":
            body = []
            i += 1
            while lines[i].strip() != "```":
                body.append(lines[i])
                i += 1
            out.append((len(out) + 1, skip_next, "\n".join(body) + "\n"))
            skip_next = False
        elif line.strip().startswith("```"):
            # Another fence: skip over it whole (it may hold lines that look like ours).
            i += 1
            while not lines[i].strip().startswith("```"):
                i += 1
        i += 1
    return out


def runner(found, local_dir, checks):
    q = shlex.quote
    parts = [
        "set -Eeuo pipefail",
        f"source {q(checks)}",
        f'(( EXPECTED_BLOCKS == {len(found)} )) || {{ echo "the page has {len(found)} sh blocks,'
        f' the checks expect $EXPECTED_BLOCKS" >&2; exit 1; }}',
        'mkdir -p "$OUT"',
        "curl() { command curl -w '%{stderr}\\nHTTP_STATUS %{http_code}\\n' \"$@\"; }",
        # fd 3: the runner's own stderr, also inside a block whose output goes to a file.
        "exec 3>&2",
        "trap 'echo \"block $BLOCK failed; its output:\" >&3; cat \"$OUT/$BLOCK.out\" >&3' ERR",
    ]
    for number, skipped, body in found[1:]:
        if skipped:
            parts.append(f'echo "==> block {number}: not run (marked in the page)" >&2')
            continue
        body = body.replace(".local/", local_dir.rstrip("/") + "/")
        parts += [
            f"BLOCK={number}",
            f"declare -F check_block_{number} >/dev/null || "
            f'{{ echo "no check_block_{number}" >&2; exit 1; }}',
            f"printf '==> block {number}:\\n%s' {q(body)} >&2",
            "{",
            body.rstrip("\n"),
            f'}} >"$OUT/{number}.out" 2>&1',
            f"check_block_{number}",
            f'echo "==> block {number}: ok" >&2',
        ]
    return "\n".join(parts) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("page")
    parser.add_argument("--first", action="store_true")
    parser.add_argument("--runner", action="store_true")
    parser.add_argument("--local-dir")
    parser.add_argument("--checks")
    args = parser.parse_args()
    found = blocks(open(args.page, encoding="utf-8").read())
    if not found:
        sys.exit(f"{args.page} has no sh block")
    if args.first:
        print(found[0][2].strip())
    elif args.runner:
        print(runner(found, args.local_dir, args.checks), end="")
    else:
        parser.error("--first or --runner")
    return 0


if __name__ == "__main__":
    sys.exit(main())
