#!/usr/bin/env python3
"""Checks that the documentation cannot drift from the code, offline and in a second.

- Every relative link of README.md, CHANGELOG.md, docs/, shared/docs/ and deploy/SECURITY.md
  names a file that exists, and every #anchor into a Markdown file names one of its headings.
- Every environment variable the services read (ingest, projector and the notifier, query-api,
  shared, the all-in-one stack) has a row in docs/configuration.md, and every row names a
  variable some code reads (the services, deploy/*.sh, or the platform's own).
- Every `--flag` README.md and docs/ give `query-api`, `projector`, `demo-fleet` or a
  deploy/ script is one that command defines.
- README.md, CHANGELOG.md and docs/ speak of the product only: not of numbered issues or work
  sessions, nor of the machine something was measured on.

Exits 1 and lists every problem; run by ./deploy/test.sh.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIG_PAGE = ROOT / "docs" / "configuration.md"
SERVICE_SOURCES = ["ingest/src", "query-api/src", "projector/src", "shared/src", "deploy/stack/src"]
# Read by a tool around the services rather than by their config code: documented on purpose.
OTHER_DOCUMENTED = {"MEMBER_PASSWORD", "RUST_LOG"}
# Phrases about how something was built, not about what it does.
NOT_PRODUCT = [
    (re.compile(r"\bissues? #?\d+\b", re.I), "an issue number"),
    (re.compile(r"\b(work )?sessions? \d+\b", re.I), "a numbered work session"),
    (re.compile(r"\bthis (session|box)\b", re.I), "the machine or session it was written on"),
    (re.compile(r"\bhelpers?\b", re.I), "the people or tools that built it"),
]


def markdown_files() -> list[Path]:
    files = [ROOT / "README.md", ROOT / "CHANGELOG.md", ROOT / "deploy" / "SECURITY.md"]
    files += sorted((ROOT / "docs").glob("**/*.md"))
    files += sorted((ROOT / "shared" / "docs").glob("**/*.md"))
    return [f for f in files if f.exists()]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    in_code = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code and (m := re.match(r"#{1,6} (.+)", line)):
            found.add(slug(m.group(1)))
    return found


def prose(path: Path) -> str:
    """The file without its fenced code blocks (links inside code are examples)."""
    return re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.M | re.S)


def check_links(problems: list[str]) -> None:
    cache: dict[Path, set[str]] = {}
    for path in markdown_files():
        for target in re.findall(r"\]\(([^)\s]+)\)", prose(path)):
            if re.match(r"[a-z]+:", target):
                continue
            file_part, _, fragment = target.partition("#")
            linked = (path.parent / file_part).resolve() if file_part else path
            where = f"{path.relative_to(ROOT)}: link {target}"
            if not linked.exists():
                problems.append(f"{where}: no such file")
            elif fragment and linked.suffix == ".md":
                known = cache.setdefault(linked, anchors(linked))
                if fragment not in known:
                    problems.append(f"{where}: no heading with that anchor")


def variables_read_by_code() -> set[str]:
    pattern = re.compile(
        r"(?:or_default|required|required_secret|optional_secret|optional_url|seconds|secs|millis"
        r"|get)\(\s*\"([A-Z][A-Z0-9_]{2,})\"",
    )
    names: set[str] = set()
    for root in SERVICE_SOURCES:
        for source in (ROOT / root).glob("**/*.rs"):
            if source.name.endswith("_tests.rs") or source.name == "tests.rs":
                continue
            # Inline test modules come last and name made-up variables.
            text = re.split(r"#\[cfg\(test\)\]\s*mod \w+\s*\{", source.read_text(encoding="utf-8"))[0]
            names.update(pattern.findall(text))
    return names


def variables_documented() -> set[str]:
    rows = re.findall(r"^\| `([A-Z][A-Z0-9_]+)` \|", CONFIG_PAGE.read_text(encoding="utf-8"), re.M)
    return set(rows)


def variables_known_elsewhere() -> set[str]:
    """What deploy/*.sh and the binaries' command lines read: documented, not config structs."""
    text = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "deploy").glob("*.sh"))
    return set(re.findall(r"\$\{?([A-Z][A-Z0-9_]+)", text)) | OTHER_DOCUMENTED


def check_configuration(problems: list[str]) -> None:
    read = variables_read_by_code()
    documented = variables_documented()
    for name in sorted(read - documented):
        problems.append(f"docs/configuration.md: no row for {name}, which the code reads")
    for name in sorted(documented - read - variables_known_elsewhere()):
        problems.append(f"docs/configuration.md: {name} has a row, but no code reads it")


# The commands the docs show, and where each one's flags are defined.
COMMANDS = {
    "query-api": ["query-api/src/cli.rs", "query-api/src/team/cli.rs"],
    "projector": ["projector/src/main.rs"],
    "demo-fleet": ["deploy/fleet/src/config.rs"],
    "deploy/up.sh": ["deploy/up.sh"],
    "deploy/test.sh": ["deploy/test.sh"],
    "deploy/bench.sh": ["deploy/bench.sh"],
    "deploy/fuzz.sh": ["deploy/fuzz.sh"],
    "deploy/backup.sh": ["deploy/backup.sh"],
    "deploy/restore.sh": ["deploy/restore.sh"],
}


def flags_defined(sources: list[str]) -> set[str]:
    """A clap struct's `#[arg(long)]` fields (as `--kebab-case`, or their `long = "..."`), and a
    script's `--flag)` cases."""
    flags = {"--help"}
    for source in sources:
        text = (ROOT / source).read_text(encoding="utf-8")
        fields = re.findall(
            r"#\[arg\(([^]]*)\)\]\s*(?:#\[[^]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?(\w+):", text
        )
        for attribute, field in fields:
            if "long" not in attribute:
                continue
            named = re.search(r'long\s*=\s*"([a-z0-9-]+)"', attribute)
            flags.add("--" + (named.group(1) if named else field.replace("_", "-")))
        flags.update(re.findall(r"^\s*(?:-\w \| )?(--[a-z][a-z0-9-]*)\)", text, re.M))
    return flags


def check_flags(problems: list[str]) -> None:
    """Every `--flag` the docs give a command exists in that command's definition."""
    defined = {command: flags_defined(sources) for command, sources in COMMANDS.items()}
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
    for path in files:
        if not path.exists():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for command, flags in defined.items():
                at = line.find(command + " ")
                if at < 0:
                    continue
                # The flags up to the next command on the line (`;`, `|`, `&&`, a comment).
                rest = re.split(r"[;|&#`]", line[at + len(command):])[0]
                for flag in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", rest):
                    if flag not in flags:
                        problems.append(
                            f"{path.relative_to(ROOT)}:{number}: {command} has no {flag}"
                        )


def check_product_only(problems: list[str]) -> None:
    files = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("**/*.md"))]
    for path in files:
        if not path.exists():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for pattern, what in NOT_PRODUCT:
                if m := pattern.search(line):
                    problems.append(
                        f"{path.relative_to(ROOT)}:{number}: '{m.group(0)}' speaks of {what}, "
                        "not of the product"
                    )


def main() -> int:
    problems: list[str] = []
    check_links(problems)
    check_configuration(problems)
    check_flags(problems)
    check_product_only(problems)
    if problems:
        print("documentation checks failed:", *problems, sep="\n  - ")
        return 1
    print("documentation: ok (links and anchors, configuration variables, command flags, "
          "product-only text)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
