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
- So do the code and its comments: every tracked text file we write (`git ls-files`: sources,
  scripts, tests, SQL, templates, configuration) names no issue, no session of work, no development
  machine, and points at no README section (those live in docs/ now). Applied migrations are
  frozen, so the ones that exist are exempt by name.

Exits 1 and lists every problem (file:line and the phrase); run by ./deploy/test.sh.
`--self-test` checks the code patterns against known good and bad lines instead.
"""

from __future__ import annotations

import re
import subprocess
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
    (re.compile(r"\b(work )?sessions? \d+\b", re.I), "a numbered session of work"),
    (re.compile(r"\bthis (session|box)\b", re.I), "the machine or session it was written on"),
    (re.compile(r"\bhelpers?\b", re.I), "the people or tools that built it"),
]
# The same for code and comments, precise enough to leave product words alone: a player's or a
# database's session, a helper function, "issue a key" and "issue 2 keys" all pass.
NOT_PRODUCT_IN_CODE = [
    (
        re.compile(
            r"\bissues?(?: #?|[_-])\d+(?!\d)"
            r"(?!\s+(?:new\s+|more\s+)?(?:api\b|keys?\b|tokens?\b|invites?\b))",
            re.I,
        ),
        "an issue number",
    ),
    (re.compile(r"\b(?:the|this) issue's\b", re.I), "the issue it was written for"),
    (re.compile(r"\b(?:pull request|PR) #\d+\b", re.I), "a pull request number"),
    (re.compile(r"\bwork[- ]sessions?\b|\bsessions? #\d+\b", re.I), "a session of work"),
    (
        re.compile(r"\bthis (?:session|box)\b|\b\d+-core box\b", re.I),
        "the machine or session it was written on",
    ),
    (
        re.compile(
            r"\b(?:helpers|engineers) (?:(?:are|were) )?compil(?:e|ing)\b"
            r"|\b(?:helpers|engineers) (?:are|were) building\b",
            re.I,
        ),
        "the people or tools that built it",
    ),
    # The README's sections moved to docs/: cite the page, or say the fact.
    (
        re.compile(
            r"\bREADME(?:'s)?(?:,\s*|\s+)(?:\"[A-Z][^\"]*\"?|[A-Z][a-z]+\b[,)])"
            r"|\bsee (?:the )?README\b(?!\.md)"
        ),
        "a README section (now a page of docs/)",
    ),
]
# Applied migrations are frozen: sqlx stores each one's checksum, so changing a byte of one breaks
# every upgrade of an existing database. These existed before the code check did and keep their
# wording; a new migration is checked like any other file.
FROZEN_MIGRATIONS = {f"projector/migrations/{name}.sql" for name in [
    "0001_accounts_keys_public", "0002_event_timeline", "0003_players_and_sessions",
    "0004_servers", "0005_punishments_flags_chat", "0006_funnels",
    "0007_events_player_index_covers_funnels", "0008_drop_events_player_index",
    "0009_funnels_in_the_service", "0010_parked_messages_sqlstate",
    "0011_team_members_sessions_audit", "0012_server_rollups", "0013_account_wide_reads",
    "0014_player_names", "0015_notes", "0016_search_statistics", "0017_player_active_days",
    "0018_event_trends", "0019_alerts", "0020_players_names_trigram", "0021_erasure",
    "0022_retention_indexes", "0023_parked_per_read_model", "0024_checkpoints_per_partition",
]}
# The kinds of file we write; anything else tracked (images, lock files, vendored and generated
# files) is not ours to word.
CODE_SUFFIXES = {
    ".rs", ".sh", ".py", ".mjs", ".js", ".java", ".toml", ".yaml", ".yml", ".sql", ".html",
    ".css", ".md", ".xml", ".json", ".conf",
}
CODE_NAMES = {"Dockerfile", ".gitignore", ".dockerignore"}
NOT_OURS = {"Cargo.lock", "package-lock.json"}


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
        r"(?:or_default|required|required_secret|optional_secret|optional_url|optional_base_url"
        r"|seconds|secs|millis"
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


def code_files() -> list[Path]:
    """Text files of the kinds we write, tracked or new (not ignored: generated files are), but
    for what check_product_only reads."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode("utf-8").split("\0")
    docs = {ROOT / "README.md", ROOT / "CHANGELOG.md", *(ROOT / "docs").glob("**/*.md")}
    files = []
    for name in filter(None, listed):
        path = ROOT / name
        if (
            path.name in NOT_OURS
            or name in FROZEN_MIGRATIONS
            or "vendor" in path.parts
            or ".min." in path.name
            or path in docs
            or not path.is_file()
        ):
            continue
        if path.suffix in CODE_SUFFIXES or path.name in CODE_NAMES or shebang(path):
            files.append(path)
    return files


def shebang(path: Path) -> bool:
    with path.open("rb") as f:
        return f.read(2) == b"#!"


def not_product_in_code(line: str) -> str | None:
    """What in `line` speaks of how the code was built, and of what kind; None if nothing."""
    for pattern, what in NOT_PRODUCT_IN_CODE:
        if m := pattern.search(line):
            return f"'{m.group(0)}' speaks of {what}"
    return None


def check_code_product_only(problems: list[str]) -> int:
    """Returns how many files it read."""
    files = code_files()
    for path in files:
        data = path.read_bytes()
        if b"\0" in data[:8192]:
            continue
        for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            if found := not_product_in_code(line):
                problems.append(f"{path.relative_to(ROOT)}:{number}: {found}, not of the product")
    return len(files)


def self_test() -> int:
    """The code patterns against lines they must flag and lines they must pass. The bad lines
    are split so that this file passes its own check."""
    bad = [
        "// see issue" + " 12",
        "//! Retention (issue" + " 16): cohorts",
        "# fixed in issue #" + "7",
        "-- Alerts (issues" + " 17)",
        "/// Since work" + " session 3 the fold",
        "// Measured on this" + " box: 40k/s",
        "// about a second on the 2-core" + " box",
        "// slow while five helpers" + " compile",
        "/// (README" + ", Benchmarks)",
        "//! The rules (README" + " \"Privacy\"): an erased",
        "/// the README" + "'s \"Retention\" says it",
        "// configuration from the environment; see READ" + "ME)",
        "// reverted in PR #" + "41",
        "// The issue" + "'s request, exactly.",
        "fn issue" + "_12_regression() {",
    ]
    good = [
        "/// Folds the session and heartbeat records into the sessions tables",
        "// The session is gone, and its lock with it.",
        "// Held for the whole rebuild; the lock ends with the database session.",
        "use crate::helpers::{PLAYER, TestIngest};",
        "/// Helper: mostly warnings and mutes.",
        "// Issue API keys to the account, then issue 2 keys more",
        "//! issue a key per server; sessions 1 and 2 overlap",
        "// \"yes\" when the box is ticked.",
        "# a receiver on this machine (loopback)",
        "// see plugin/server-api-stubs/README.md for the stubs",
        "//! the rules (docs/privacy.md, \"Erase a player\")",
        "    color: #123456;",
        "fn issue_keys_per_server() {",
    ]
    failures = [f"not flagged: {line}" for line in bad if not not_product_in_code(line)]
    failures += [f"flagged: {line} ({not_product_in_code(line)})" for line in good
                 if not_product_in_code(line)]
    if failures:
        print("check_docs self-test failed:", *failures, sep="\n  - ")
        return 1
    print(f"check_docs self-test: ok ({len(bad)} lines flagged, {len(good)} passed)")
    return 0


def main() -> int:
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    problems: list[str] = []
    check_links(problems)
    check_configuration(problems)
    check_flags(problems)
    check_product_only(problems)
    code_count = check_code_product_only(problems)
    if problems:
        print("documentation checks failed:", *problems, sep="\n  - ")
        return 1
    kinds = " ".join(sorted(CODE_SUFFIXES | CODE_NAMES))
    print("documentation: ok (links and anchors, configuration variables, command flags, "
          "product-only text in README, CHANGELOG and docs/, and in "
          f"{code_count} files of the code, tracked or new: {kinds}, scripts by their #!; "
          f"{len(FROZEN_MIGRATIONS)} applied migrations exempt)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
