"""Every rule id the repository cites is defined in docs/RULES.md, and RULES.md is well formed.

Rule ids (`XHDR-22`, `CACHE-13`, ...) number the project's requirements digest of MCP 2026-07-28,
which lives outside the repository; docs/RULES.md restates each one so that a clone is enough to
look a citation up. The scan covers every text file git lists (tracked, or untracked and not
ignored), so it needs neither ../shared nor the network.

The id pattern only knows the prefixes RULES.md defines (parsed from RULES.md itself), so words
such as UTF-8, sha-256, RFC-9110 or draft-07 never count as citations, and a new group of ids
only needs its table in RULES.md. A citation may be a range (`XHDR-02..08`) or a list
(`MRTR-16/18/19`); every id it names must exist.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "docs" / "RULES.md"

# One table row per rule: | ID | binds | level | rule | source |
ROW = re.compile(r"^\|\s*(?P<id>[A-Z][A-Z0-9]*-\d+)\s*\|(?P<rest>.*)\|\s*$")
BINDS = {"client", "server", "generator", "all", "intermediary"}
# A source names a spec page (`server-tools.mdx § Tool Names`) or a schema.ts type.
SOURCE = re.compile(r"[a-z0-9-]+\.mdx § \S|schema\.ts `[^`]+`")
# Files that only exist next to a developer's checkout (../shared/spec), never in a clone.
UNSHIPPED = re.compile(r"\b(?:REQUIREMENTS|LEGACY|CONFORMANCE(?:-LEGACY-AUTH)?)\.md\b|\bCONFORMANCE §")
CONFORMANCE_REF = re.compile(r"\bconformance §(\d+)(?:\.(\d+))?", re.IGNORECASE)


@cache
def rows() -> list[tuple[int, str, list[str]]]:
    """(line number, id, cells after the id) for every rule row of RULES.md."""
    found = []
    for number, line in enumerate(RULES.read_text(encoding="utf-8").splitlines(), 1):
        match = ROW.match(line)
        if match:
            found.append((number, match["id"], [cell.strip() for cell in match["rest"].split("|")]))
    return found


@cache
def defined() -> frozenset[str]:
    return frozenset(rule for _, rule, _ in rows())


@cache
def id_pattern() -> re.Pattern[str]:
    """A citation: a defined prefix, `-`, a number, then optional `..N` ranges or `/N` lists.

    Not preceded by a word character or `-` (so `XHDR-01` is never read as `HDR-01`), not followed
    by one, nor by `.digit` (a version such as `HTTP-1.1` is not a citation).
    """
    prefixes = sorted({rule.split("-")[0] for rule in defined()}, key=lambda p: (-len(p), p))
    return re.compile(
        rf"(?<![\w-])(?P<prefix>{'|'.join(prefixes)})-(?P<first>\d+)(?P<more>(?:(?:\.\.|/)\d+)*)(?![\w-]|\.\d)"
    )


def expand(match: re.Match[str]) -> list[str]:
    """The ids one citation names: `XHDR-02..04` -> XHDR-02, XHDR-03, XHDR-04; `IN-02/07` -> IN-02, IN-07."""
    prefix, first = match["prefix"], match["first"]
    width = len(first)
    numbers = [int(first)]
    for separator, digits in re.findall(r"(\.\.|/)(\d+)", match["more"]):
        end = int(digits)
        if separator == "/":
            numbers.append(end)
        elif end <= numbers[-1]:
            return [match[0]]  # a backwards range cites nothing valid: report it as written
        else:
            numbers.extend(range(numbers[-1] + 1, end + 1))
    return [f"{prefix}-{n:0{width}d}" for n in numbers]


@cache
def text_files() -> list[tuple[str, str]]:
    """(path, text) of every UTF-8 text file git lists: tracked, or untracked and not ignored."""
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    listed = (
        subprocess.run(
            [git, "ls-files", "-co", "--exclude-standard", "-z"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        )
        .stdout.decode("utf-8")
        .split("\0")
    )
    files = []
    for name in filter(None, listed):
        path = ROOT / name
        if not path.is_file():
            continue  # deleted in the work tree but still in the index
        data = path.read_bytes()
        if b"\0" in data:
            continue
        try:
            files.append((name, data.decode("utf-8")))
        except UnicodeDecodeError:
            continue
    return files


def citations() -> list[tuple[str, int, str, str]]:
    """(path, line, id, citation as written) for every id the repository cites."""
    pattern = id_pattern()
    found = []
    for name, text in text_files():
        for number, line in enumerate(text.splitlines(), 1):
            for match in pattern.finditer(line):
                found.extend((name, number, rule, match[0]) for rule in expand(match))
    return found


def test_rules_file_defines_ids() -> None:
    assert len(defined()) > 200, f"{RULES} defines only {len(defined())} rule ids"


def test_every_cited_rule_id_is_defined() -> None:
    missing = [
        f"{name}:{number}: {rule}" + (f" (in {written})" if written != rule else "")
        for name, number, rule, written in citations()
        if rule not in defined()
    ]
    assert not missing, "rule ids cited but not defined in docs/RULES.md:\n" + "\n".join(missing)


def test_rule_ids_are_unique() -> None:
    counts = Counter(rule for _, rule, _ in rows())
    lines = {rule: [n for n, r, _ in rows() if r == rule] for rule, count in counts.items() if count > 1}
    assert not lines, f"rule ids defined more than once in docs/RULES.md (id: lines): {lines}"


def test_every_rule_row_is_complete_and_has_a_source() -> None:
    problems = []
    for number, rule, cells in rows():
        if len(cells) != 4 or not all(cells):
            problems.append(
                f"RULES.md:{number}: {rule}: expected 4 non-empty cells after the id, got {cells}"
            )
            continue
        binds, level, _rule, source = cells
        unknown = {b.strip() for b in re.split(r"[,/]", binds)} - BINDS
        if unknown:
            problems.append(f"RULES.md:{number}: {rule}: unknown binds {sorted(unknown)}")
        if not re.search(r"MUST|SHOULD|REQUIRED|RECOMMENDED|must|should|statement|encouraged", level):
            problems.append(f"RULES.md:{number}: {rule}: no level keyword in {level!r}")
        if not SOURCE.search(source):
            problems.append(f"RULES.md:{number}: {rule}: source {source!r} names no spec page section")
    assert not problems, "\n".join(problems)


def test_no_citation_of_files_outside_the_repository() -> None:
    """The requirements and conformance digests are not shipped; cite RULES.md instead."""
    found = [
        f"{name}:{number}: {line.strip()}"
        for name, text in text_files()
        if name != "tests/test_rules.py"
        for number, line in enumerate(text.splitlines(), 1)
        if UNSHIPPED.search(line)
    ]
    assert not found, "references to files that only exist in ../shared:\n" + "\n".join(found)


def test_conformance_section_references_resolve() -> None:
    """`conformance §N` names a `### §N` heading of RULES.md; `§4.M` a step of §4's numbered list."""
    text = RULES.read_text(encoding="utf-8")
    sections = {
        int(n): body for n, body in re.findall(r"^### §(\d+)\b[^\n]*\n(.*?)(?=^##|\Z)", text, re.M | re.S)
    }
    assert 4 in sections, "RULES.md has no `### §4` conformance section"
    steps = {int(n) for n in re.findall(r"^(\d+)\. ", sections[4], re.M)}
    bad = []
    for name, body in text_files():
        for number, line in enumerate(body.splitlines(), 1):
            for match in CONFORMANCE_REF.finditer(line):
                section, step = int(match[1]), match[2]
                if section not in sections or (step and (section != 4 or int(step) not in steps)):
                    bad.append(f"{name}:{number}: {match[0]}")
    assert not bad, "conformance references RULES.md does not define:\n" + "\n".join(bad)


def test_id_pattern_matches_citations_only() -> None:
    pattern = id_pattern()
    prose = (
        "UTF-8, utf-8, sha-256, RFC-9110, ISO-8601, draft-07, HTTP/1.1, HTTP-1.1, 2020-12, latin-1, "
        "x-mcp-header"
    )
    assert [m[0] for m in pattern.finditer(prose)] == []
    cited = "see XHDR-02..04 (-> XHDR-10), MRTR-16/18 and HTTP-21."
    assert [rule for m in pattern.finditer(cited) for rule in expand(m)] == [
        "XHDR-02",
        "XHDR-03",
        "XHDR-04",
        "XHDR-10",
        "MRTR-16",
        "MRTR-18",
        "HTTP-21",
    ]
    assert [m[0] for m in pattern.finditer("PLUGIN-02 XHDR-01a")] == []  # no id inside other words
    undefined = "XHDR" + "-99"  # spelled apart so this file never cites it
    assert [rule for m in pattern.finditer(undefined) for rule in expand(m)] == [undefined]
    assert undefined not in defined()
