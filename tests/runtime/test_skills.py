"""A client's checks of skill content (SEP-2640 § Integrity and Verification; mcpgen_runtime/skills.py):
entries parsed within bounds, a file's size compared before its digest, a fetched SKILL.md's
frontmatter compared field by field, YAML that could blow up (aliases) or is too large refused."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from pydantic import ValidationError

from mcpgen_runtime.skills import (
    MAX_FILES,
    MAX_FRONTMATTER,
    Skill,
    SkillFile,
    SkillVerificationError,
    check_frontmatter,
    verified,
)

BODY = b"---\nname: pdf-processing\ndescription: Extract PDFs\nmetadata:\n  version: '2'\n---\n\nBody.\n"


def file_for(data: bytes, uri: str = "skill://pdf-processing/SKILL.md") -> SkillFile:
    return SkillFile(uri=uri, digest="sha256:" + hashlib.sha256(data).hexdigest(), size=len(data))


def entry(**frontmatter: Any) -> Skill:
    return Skill.model_validate(
        {
            "uri": "skill://pdf-processing/SKILL.md",
            "frontmatter": {"name": "pdf-processing", "description": "Extract PDFs", **frontmatter},
            "resources": [file_for(BODY).model_dump()],
        }
    )


def test_a_file_is_checked_by_size_then_digest() -> None:
    listed = file_for(BODY)
    assert verified(listed, BODY) == BODY
    with pytest.raises(SkillVerificationError, match="longer than the"):
        verified(listed, BODY + b"x")
    with pytest.raises(SkillVerificationError, match="shorter than the"):
        verified(listed, BODY[:-1])
    with pytest.raises(SkillVerificationError, match="digest"):
        verified(listed, BODY.replace(b"Body", b"Evil"))


def test_entries_are_typed_and_bounded() -> None:
    skill = entry(license="MIT", **{"allowed-tools": "Bash"})
    assert (skill.name, skill.frontmatter.license, skill.root) == (
        "pdf-processing",
        "MIT",
        "skill://pdf-processing",
    )
    assert skill.frontmatter.as_dict()["allowed-tools"] == "Bash"
    assert skill.file("skill://pdf-processing/SKILL.md") is not None and skill.file("skill://x") is None
    for bad in (
        {"digest": "sha256:ABC", "size": 1},
        {"digest": "md5:" + "0" * 32, "size": 1},
        {"digest": "sha256:" + "0" * 64, "size": -1},
    ):
        with pytest.raises(ValidationError):
            SkillFile.model_validate({"uri": "skill://a/SKILL.md", **bad})
    with pytest.raises(ValidationError):
        Skill.model_validate({"uri": "skill://a/SKILL.md", "frontmatter": {"name": "a"}, "resources": []})
    with pytest.raises(ValidationError):  # resources is an array or "dynamic", nothing else
        Skill.model_validate(
            {"uri": "s", "frontmatter": {"name": "a", "description": "d"}, "resources": "static"}
        )
    many = [file_for(b"x", f"skill://a/{i}.md").model_dump() for i in range(MAX_FILES + 1)]
    big = Skill.model_validate(
        {"uri": "skill://a/SKILL.md", "frontmatter": {"name": "a", "description": "d"}, "resources": many}
    )
    assert "more than 512" in (big.over_limits() or "")
    assert entry().over_limits() is None


def test_frontmatter_is_compared_field_by_field() -> None:
    text = BODY.decode()
    check_frontmatter("skill://pdf-processing/SKILL.md", text, entry(metadata={"version": "2"}).frontmatter)
    with pytest.raises(SkillVerificationError, match="differs from the entry's in 'metadata'"):
        check_frontmatter("skill://pdf-processing/SKILL.md", text, entry().frontmatter)
    changed = text.replace("Extract PDFs", "Exfiltrate credentials")
    with pytest.raises(SkillVerificationError, match="'description'"):
        check_frontmatter("u", changed, entry(metadata={"version": "2"}).frontmatter)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("no frontmatter\n", "must begin with YAML frontmatter"),
        ("---\nname: a\n", "no closing `---`"),
        ("---\n[unclosed\n---\n", "not valid YAML"),
        ("---\n- a list\n---\n", "must be a YAML mapping"),
        ("---\na: &x [1, 2]\nb: *x\n---\n", "alias"),
        ("---\na: 1\na: 2\n---\n", "twice"),
        ("---\nname: " + "a" * (MAX_FRONTMATTER + 100) + "\n---\n", "no closing `---` line within"),
    ],
)
def test_frontmatter_that_cannot_be_read_safely_is_refused(text: str, message: str) -> None:
    with pytest.raises(SkillVerificationError, match=message):
        check_frontmatter("skill://a/SKILL.md", text, entry().frontmatter)


def test_frontmatter_is_read_as_yaml_1_2_as_the_server_renders_it() -> None:
    """`license: no` is the string "no" on both sides (YAML 1.2), not False: a server rendering the
    entry and a client checking the file agree."""
    text = "---\nname: pdf-processing\ndescription: Extract PDFs\nlicense: no\nenabled: on\n---\n"
    check_frontmatter("u", text, entry(license="no", enabled="on").frontmatter)
