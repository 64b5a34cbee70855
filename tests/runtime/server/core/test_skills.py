"""Skills served from a folder (SEP-2640; server/core/skills/): the folder read and checked at start
(frontmatter rules, limits, symbolic links), the extension's methods in the sans-I/O dispatcher
(skills/list, skills/get, resources/directory/read, resources/read of each file), path-escape
attempts refused with -32602, files changed after start refused, and what a legacy session gets.
"""

from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path
from typing import Any, ClassVar

import pytest

from mcpgen_runtime.server import ServerConfig, ToolServer
from mcpgen_runtime.server.core.config import IncomingRequest
from mcpgen_runtime.server.core.skills.folder import MAX_SKILL_BYTES, MAX_SKILL_FILES, SkillError
from mcpgen_runtime.server.core.skills.frontmatter import MAX_FRONTMATTER_BYTES
from mcpgen_runtime.server.legacy.session_dispatch import LegacyDispatcher
from mcpgen_runtime.server.legacy.sessions import Session
from tests.runtime.server_helpers import answer, result, run

SKILLS = "io.modelcontextprotocol/skills"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"


def error_code(server: ToolServer, method: str, params: dict[str, Any]) -> int:
    response = answer(server, method, params)
    assert "error" in response, response
    code: int = response["error"]["code"]
    return code


def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def skill_md(name: str, description: str = "Does a thing.", extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n\n# {name}\n"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write(
        root / "pdf" / "SKILL.md", skill_md("pdf", extra="license: Apache-2.0\nmetadata:\n  version: '2'\n")
    )
    write(root / "pdf" / "templates" / "invoice.md", "# Invoice\n")
    write(root / "pdf" / "templates" / "regional" / "eu.md", "# EU\n")
    write(root / "pdf" / "logo.png", PNG)
    write(root / "pdf" / ".hidden", "not served")
    write(root / "acme" / "billing" / "refunds" / "SKILL.md", skill_md("refunds"))
    write(root / "README.md", "outside every skill: not served")
    return root


def serve(folder: Path, **config: Any) -> ToolServer:
    return ToolServer(ServerConfig(name="skills", skills=folder, **config))


def digest(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


# ---- what is served -------------------------------------------------------------------------------


def test_discover_declares_the_extension_with_directory_read_and_resources(folder: Path) -> None:
    caps = result(serve(folder), "server/discover")["capabilities"]
    assert caps["extensions"][SKILLS] == {"directoryRead": True}
    assert "resources" in caps
    bare = result(ToolServer(ServerConfig(name="bare")), "server/discover")["capabilities"]
    assert SKILLS not in bare["extensions"]
    assert error_code(ToolServer(ServerConfig(name="bare")), "skills/list", {}) == -32601


def test_entries_carry_the_frontmatter_verbatim_and_every_file_with_its_digest_and_size(folder: Path) -> None:
    listed = result(serve(folder), "skills/list")
    assert listed["resultType"] == "complete"
    assert listed["ttlMs"] >= 0 and listed["cacheScope"] == "public"
    by_uri = {s["uri"]: s for s in listed["skills"]}
    assert list(by_uri) == ["skill://acme/billing/refunds/SKILL.md", "skill://pdf/SKILL.md"]
    pdf = by_uri["skill://pdf/SKILL.md"]
    assert pdf["frontmatter"] == {
        "name": "pdf",
        "description": "Does a thing.",
        "license": "Apache-2.0",
        "metadata": {"version": "2"},
    }
    files = {
        "skill://pdf/SKILL.md": folder / "pdf" / "SKILL.md",
        "skill://pdf/logo.png": folder / "pdf" / "logo.png",
        "skill://pdf/templates/invoice.md": folder / "pdf" / "templates" / "invoice.md",
        "skill://pdf/templates/regional/eu.md": folder / "pdf" / "templates" / "regional" / "eu.md",
    }
    assert pdf["resources"] == [
        {"uri": uri, "digest": digest(path), "size": path.stat().st_size} for uri, path in files.items()
    ]


def test_skills_list_is_paginated_and_its_cursors_checked(folder: Path) -> None:
    server = serve(folder, page_size=1)
    first = result(server, "skills/list")
    second = result(server, "skills/list", {"cursor": first["nextCursor"]})
    assert [s["uri"] for s in first["skills"] + second["skills"]] == [
        "skill://acme/billing/refunds/SKILL.md",
        "skill://pdf/SKILL.md",
    ]
    assert "nextCursor" not in second
    assert error_code(server, "skills/list", {"cursor": "bogus"}) == -32602


def test_skills_get_answers_a_served_skill_and_refuses_anything_else(folder: Path) -> None:
    server = serve(folder)
    got = result(server, "skills/get", {"uri": "skill://pdf/SKILL.md"})
    assert got["skill"] == next(
        s for s in result(server, "skills/list")["skills"] if s["uri"] == got["skill"]["uri"]
    )
    assert got["ttlMs"] >= 0 and "cacheScope" in got and "nextCursor" not in got
    for uri in ("skill://nope/SKILL.md", "skill://pdf", "skill://pdf/templates/invoice.md", 7, None):
        assert error_code(server, "skills/get", {"uri": uri}) == -32602


def test_files_are_read_as_text_or_blob_with_their_mime_type(folder: Path) -> None:
    server = serve(folder)
    skill = result(server, "resources/read", {"uri": "skill://pdf/SKILL.md"})["contents"]
    assert skill == [
        {
            "uri": "skill://pdf/SKILL.md",
            "text": (folder / "pdf" / "SKILL.md").read_text(),
            "mimeType": "text/markdown",
        }
    ]
    logo = result(server, "resources/read", {"uri": "skill://pdf/logo.png"})["contents"][0]
    assert logo["mimeType"] == "image/png" and base64.b64decode(logo["blob"]) == PNG
    nested = result(server, "resources/read", {"uri": "skill://pdf/templates/regional/eu.md"})["contents"][0]
    assert nested["text"] == "# EU\n"


def test_resources_list_has_each_skill_md_named_from_its_frontmatter_and_no_supporting_file(
    folder: Path,
) -> None:
    listed = result(serve(folder), "resources/list")["resources"]
    assert [r["uri"] for r in listed] == ["skill://acme/billing/refunds/SKILL.md", "skill://pdf/SKILL.md"]
    assert listed[1]["name"] == "pdf" and listed[1]["description"] == "Does a thing."
    assert listed[1]["mimeType"] == "text/markdown"


def test_directory_read_lists_direct_children_and_subdirectories(folder: Path) -> None:
    server = serve(folder)
    root = result(server, "resources/directory/read", {"uri": "skill://pdf"})
    assert root["resultType"] == "complete"
    assert [(r["uri"], r["mimeType"]) for r in root["resources"]] == [
        ("skill://pdf/SKILL.md", "text/markdown"),
        ("skill://pdf/logo.png", "image/png"),
        ("skill://pdf/templates", "inode/directory"),
    ]
    templates = result(server, "resources/directory/read", {"uri": "skill://pdf/templates"})["resources"]
    assert [r["name"] for r in templates] == ["invoice.md", "regional"]
    prefix = result(server, "resources/directory/read", {"uri": "skill://acme/billing"})["resources"]
    assert prefix == [
        {"uri": "skill://acme/billing/refunds", "name": "refunds", "mimeType": "inode/directory"}
    ]
    paged = serve(folder, page_size=2)
    first = result(paged, "resources/directory/read", {"uri": "skill://pdf"})
    rest = result(paged, "resources/directory/read", {"uri": "skill://pdf", "cursor": first["nextCursor"]})
    assert [r["name"] for r in first["resources"] + rest["resources"]] == [
        "SKILL.md",
        "logo.png",
        "templates",
    ]


@pytest.mark.parametrize(
    "uri",
    [
        "skill://pdf/SKILL.md",  # a file, not a directory
        "skill://pdf/",
        "skill://nope",
        "skill://pdf/../acme",
        "skill://pdf/templates/..",
        "skill://pdf/%2e%2e/acme",
        "skill://pdf/templates%2F..%2F..",
        "skill://pdf/.hidden",
        "skill://",
        "file:///etc",
    ],
)
def test_directory_read_refuses_what_is_no_served_directory(folder: Path, uri: str) -> None:
    assert error_code(serve(folder), "resources/directory/read", {"uri": uri}) == -32602


@pytest.mark.parametrize(
    "uri",
    [
        "skill://pdf/../../etc/passwd",
        "skill://pdf/templates/../SKILL.md",
        "skill://pdf/%2e%2e/%2e%2e/etc/passwd",
        "skill://pdf/..%2F..%2Fetc%2Fpasswd",
        "skill://pdf/templates%2Finvoice.md",
        "skill://pdf/.hidden",
        "skill:///etc/passwd",
        "skill://README.md",
        "skill://pdf/templates/invoice.md\x00",
    ],
)
def test_path_escapes_in_reads_are_unknown_resources(folder: Path, uri: str) -> None:
    response = answer(serve(folder), "resources/read", {"uri": uri})
    assert response["error"]["code"] == -32602, response


def test_uris_longer_than_max_uri_length_are_refused_before_any_lookup(folder: Path) -> None:
    server = serve(folder)
    long = "skill://pdf/" + "a" * 9000
    for method in ("resources/read", "skills/get", "resources/directory/read"):
        assert error_code(server, method, {"uri": long}) == -32602


def test_a_symbolic_link_swapped_in_after_start_that_leaves_the_folder_is_refused(
    folder: Path, tmp_path: Path
) -> None:
    server = serve(folder)
    secret = write(tmp_path / "secret.md", "# Invoice\n")  # even with the same bytes
    target = folder / "pdf" / "templates" / "invoice.md"
    target.unlink()
    target.symlink_to(secret)
    response = answer(server, "resources/read", {"uri": "skill://pdf/templates/invoice.md"})
    assert response["error"]["code"] == -32602


def test_a_file_changed_after_start_is_refused_not_served_under_a_stale_digest(folder: Path) -> None:
    server = serve(folder)
    write(folder / "pdf" / "templates" / "invoice.md", "# Changed\n")
    response = answer(server, "resources/read", {"uri": "skill://pdf/templates/invoice.md"})
    assert response["error"]["code"] == -32603
    assert "changed since the server started" in response["error"]["message"]


def test_nested_skills_are_listed_flat_and_are_supporting_files_of_the_enclosing_one(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write(root / "outer" / "SKILL.md", skill_md("outer"))
    write(root / "outer" / "inner" / "SKILL.md", skill_md("inner"))
    write(root / "outer" / "inner" / "notes.md", "notes")
    entries = {s["uri"]: s for s in result(serve(root), "skills/list")["skills"]}
    assert list(entries) == ["skill://outer/SKILL.md", "skill://outer/inner/SKILL.md"]
    outer = [r["uri"] for r in entries["skill://outer/SKILL.md"]["resources"]]
    assert outer == ["skill://outer/SKILL.md", "skill://outer/inner/SKILL.md", "skill://outer/inner/notes.md"]
    inner = [r["uri"] for r in entries["skill://outer/inner/SKILL.md"]["resources"]]
    assert inner == ["skill://outer/inner/SKILL.md", "skill://outer/inner/notes.md"]


def test_file_names_are_percent_encoded_in_uris(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write(root / "s" / "SKILL.md", skill_md("s"))
    write(root / "s" / "a b#c?.md", "x")
    server = serve(root)
    uris = [
        r["uri"] for r in result(server, "skills/get", {"uri": "skill://s/SKILL.md"})["skill"]["resources"]
    ]
    assert uris == ["skill://s/SKILL.md", "skill://s/a%20b%23c%3F.md"]
    assert result(server, "resources/read", {"uri": uris[1]})["contents"][0]["text"] == "x"


def test_yaml_1_1_scalars_stay_strings_as_yaml_1_2_reads_them(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write(root / "s" / "SKILL.md", skill_md("s", extra="a: yes\nb: 2024-01-02\nc: true\nd: 3\ne: ~\n"))
    frontmatter = result(serve(root), "skills/list")["skills"][0]["frontmatter"]
    assert {k: frontmatter[k] for k in "abcde"} == {
        "a": "yes",
        "b": "2024-01-02",
        "c": True,
        "d": 3,
        "e": None,
    }


# ---- legacy sessions ---------------------------------------------------------------------------


def test_a_2025_11_25_session_gets_no_extension_but_the_files_as_ordinary_resources(folder: Path) -> None:
    server = serve(folder)
    legacy = LegacyDispatcher(server)
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    }
    outcome, handshake = legacy.initialize(init)
    assert handshake is not None and outcome.response is not None
    capabilities = outcome.response["result"]["capabilities"]
    assert "extensions" not in capabilities and SKILLS not in capabilities.get("experimental", {})
    assert "resources" in capabilities
    session = Session("s", None, "2025-11-25", {}, {})
    for method in ("skills/list", "skills/get", "resources/directory/read"):
        message = {"jsonrpc": "2.0", "id": 2, "method": method, "params": {"uri": "skill://pdf"}}
        response = run(legacy.handle(session, message, IncomingRequest())).response
        assert response is not None and response["error"]["code"] == -32601, response
    read = {"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": "skill://pdf/SKILL.md"}}
    response = run(legacy.handle(session, read, IncomingRequest())).response
    assert response is not None and response["result"]["contents"][0]["mimeType"] == "text/markdown"


# ---- what stops the server at start --------------------------------------------------------------

BAD_FRONTMATTER = [
    ("# no frontmatter\n", "must begin with YAML frontmatter"),
    ("---\nname: s\ndescription: d\n", "no closing `---`"),
    ("---\nname: S\ndescription: d\n---\n", "lowercase letters, digits and hyphens"),
    ("---\nname: -s\ndescription: d\n---\n", "no leading, trailing or consecutive hyphen"),
    ("---\nname: s--t\ndescription: d\n---\n", "consecutive hyphen"),
    ("---\nname: " + "s" * 65 + "\ndescription: d\n---\n", "at most 64"),
    ("---\nname: other\ndescription: d\n---\n", "differs from its folder's name 's'"),
    ("---\nname: s\n---\n", "non-empty string `description`"),
    ("---\nname: s\ndescription: ''\n---\n", "non-empty string `description`"),
    ("---\nname: s\ndescription: " + "d" * 1025 + "\n---\n", "at most 1024"),
    ("---\nname: 7\ndescription: d\n---\n", "non-empty string `name`"),
    ("---\n- a list\n---\n", "must be a YAML mapping"),
    ("---\nname: s\ndescription: d\nname: s\n---\n", "the key 'name' twice"),
    ("---\nname: s\ndescription: &a d\nx: *a\n---\n", "alias *a refused"),
    ("---\nname: s\ndescription: d\nx: .inf\n---\n", "not a JSON number"),
    ("---\nname: s\ndescription: d\nx: !!binary aGk=\n---\n", "not a JSON value"),
    ("---\nname: s\ndescription: [d\n---\n", "not valid YAML"),
    ("---\nname: s\ndescription: d\nx: '" + "y" * MAX_FRONTMATTER_BYTES + "'\n---\n", "no closing `---`"),
]


@pytest.mark.parametrize(("content", "rule"), BAD_FRONTMATTER)
def test_a_bad_frontmatter_stops_the_server_naming_the_file_and_the_rule(
    tmp_path: Path, content: str, rule: str
) -> None:
    root = tmp_path / "skills"
    path = write(root / "s" / "SKILL.md", content)
    with pytest.raises(SkillError) as caught:
        serve(root)
    assert caught.value.path == str(path.resolve()) and rule in caught.value.rule, str(caught.value)


def test_a_skill_md_that_is_not_utf8_stops_the_server(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write(root / "s" / "SKILL.md", b"---\nname: s\ndescription: \xff\xfe\n---\n")
    with pytest.raises(SkillError, match="not UTF-8"):
        serve(root)


def test_the_spec_limits_stop_the_server(tmp_path: Path) -> None:
    many = tmp_path / "many"
    write(many / "s" / "SKILL.md", skill_md("s"))
    for i in range(MAX_SKILL_FILES):
        write(many / "s" / "f" / f"{i}.txt", "x")
    with pytest.raises(
        SkillError, match=f"{MAX_SKILL_FILES + 1} files: a skill holds at most {MAX_SKILL_FILES}"
    ):
        serve(many)
    large = tmp_path / "large"
    write(large / "s" / "SKILL.md", skill_md("s"))
    write(large / "s" / "a.bin", b"\0" * (MAX_SKILL_BYTES // 2))
    write(large / "s" / "b.bin", b"\0" * (MAX_SKILL_BYTES // 2))
    with pytest.raises(SkillError, match=f"a skill holds at most {MAX_SKILL_BYTES} bytes"):
        serve(large)


def test_a_symbolic_link_leading_out_of_the_folder_stops_the_server(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write(root / "s" / "SKILL.md", skill_md("s"))
    outside = write(tmp_path / "outside.md", "secret")
    (root / "s" / "link.md").symlink_to(outside)
    with pytest.raises(SkillError, match="leads out of the skills folder") as caught:
        serve(root)
    assert caught.value.path.endswith(os.path.join("s", "link.md"))


def test_a_link_to_a_directory_stops_the_server_and_a_file_link_inside_is_served(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write(root / "s" / "SKILL.md", skill_md("s"))
    shared = write(root / "t" / "SKILL.md", skill_md("t"))
    (root / "s" / "t.md").symlink_to(shared)
    server = serve(root)
    assert result(server, "resources/read", {"uri": "skill://s/t.md"})["contents"][0]["text"] == skill_md("t")
    (root / "s" / "dir").symlink_to(root / "t", target_is_directory=True)
    with pytest.raises(SkillError, match="a symbolic link to a directory"):
        serve(root)


def test_other_folder_problems_stop_the_server(tmp_path: Path) -> None:
    with pytest.raises(SkillError, match="not a directory"):
        serve(tmp_path / "missing")
    top = tmp_path / "top"
    write(top / "SKILL.md", skill_md("top"))
    with pytest.raises(SkillError, match="at the top of the skills folder"):
        serve(top)
    slash = tmp_path / "slash"
    write(slash / "s" / "SKILL.md", skill_md("s"))
    write(slash / "s" / "a\\b.md", "x")
    with pytest.raises(SkillError, match="a backslash in a name"):
        serve(slash)
    long = tmp_path / "long"
    write(long / "s" / "SKILL.md", skill_md("s"))
    write(long / "s" / ("n" * 200), "x")
    with pytest.raises(SkillError, match="over max_uri_length"):
        serve(long, max_uri_length=100)


# ---- where the folder comes from -----------------------------------------------------------------


class DeclaringServer(ToolServer):
    _skills_: ClassVar[str | None] = "skill_fixtures"


def test_a_class_declares_a_folder_relative_to_its_module_and_the_config_overrides_it(
    folder: Path, tmp_path: Path
) -> None:
    with pytest.raises(SkillError) as caught:  # relative to this test module's directory
        DeclaringServer(ServerConfig(name="declared"))
    assert caught.value.path == str(Path(__file__).parent / "skill_fixtures")
    server = DeclaringServer(ServerConfig(name="declared", skills=folder))
    assert list(server.served_skills) == ["skill://acme/billing/refunds/SKILL.md", "skill://pdf/SKILL.md"]
    with pytest.raises(ValueError, match="served already"):
        server.serve_skills(folder)
