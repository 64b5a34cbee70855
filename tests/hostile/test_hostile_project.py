"""A client project (`mcpgen client --project`) from hostile tool lists: the README lists every tool,
and what a server wrote (names, titles, descriptions) renders as plain text, nothing else.

The README is parsed by markdown-it (CommonMark, with GFM tables on): no HTML, link, image,
emphasis or extra heading comes out of the corpus (tests/hostile/corpus) or of the payloads below,
and each description's text is exactly the server's text on one line. pyproject.toml stays valid
TOML whose values are the checked name and version, whatever the tools say.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from codegen.pipeline import build_project
from codegen.render.project import ProjectMeta, markdown_text
from tests.codegen.pipeline.test_generate import load_spec

markdown_it = pytest.importorskip("markdown_it")

CORPUS = Path(__file__).parent / "corpus"
META = ProjectMeta(
    name="hostile-client", version="1.0.0", script="hostile-client", requirement="mcpgen-runtime[cli]>=0.1,<1"
)
PAYLOADS = [
    "<script>alert(1)</script>",
    "```\nimport os\n```",
    "`code` and ``more``",
    "a | b | c\n|---|---|---|\n| 1 | 2 | 3 |",
    "[x](javascript:alert(1)) and [y][ref]\n\n[ref]: javascript:alert(2)",
    "<javascript:alert(1)> <https://evil.example> www.evil.example",
    "&#106;avascript:alert(1) &lt; &amp;",
    "![img](https://evil.example/track.png)",
    "# Heading\n## Another\nSetext\n===",
    "- item\n* item\n+ item\n1. item\n2) item",
    "    indented code\n\n> quote",
    "**bold** _em_ ~~strike~~ \\*escaped\\*",
    "<!-- comment --> <div onclick='x'>",
    "line one\n\n## injected heading after a blank line",
    "trailing backslash \\",
]
_ALLOWED_INLINE = {"text", "softbreak", "code_inline"}


def _tokens(tokens: list[Any]) -> list[Any]:
    flat = []
    for token in tokens:
        flat.append(token)
        flat.extend(_tokens(token.children or []))
    return flat


def _parse(readme: str) -> list[Any]:
    return _tokens(markdown_it.MarkdownIt("commonmark").enable("table").enable("strikethrough").parse(readme))


def _project(spec_path: Path) -> tuple[str, dict[str, Any], int]:
    spec = load_spec(spec_path)
    project = build_project(spec, package="hostile_client", meta=META)
    readme = project.files["README.md"].decode("utf-8")
    return readme, tomllib.loads(project.files["pyproject.toml"].decode("utf-8")), len(spec.tools)


def _check_structure(readme: str, tools: int) -> list[Any]:
    tokens = _parse(readme)
    # the only HTML: mcpgen's own comments (the header, the markers of the user's section)
    blocks = [token.content for token in tokens if token.type == "html_block"]
    assert [block.split(" ", 2)[1] for block in blocks] == ["Generated", ">>>", "<<<"], blocks
    # each is one whole comment: nothing it holds can end it early and be read as HTML after it
    assert all(re.fullmatch(r"<!--(?:(?!--).)*-->\n", block, re.S) for block in blocks), blocks
    kinds = {token.type for token in tokens}
    assert not kinds & {"html_inline", "link_open", "image", "em_open", "strong_open", "s_open"}
    assert not kinds & {
        "table_open",
        "bullet_list_open",
        "ordered_list_open",
        "blockquote_open",
        "code_block",
    }
    headings = [token.tag for token in tokens if token.type == "heading_open"]
    assert headings == ["h1", "h2", "h2", "h2", *["h3"] * tools]
    fences = [token for token in tokens if token.type == "fence"]
    assert len(fences) == 3 + tools
    assert all(fence.content.startswith("def ") for fence in fences[3:])
    return tokens


@pytest.mark.parametrize("name", ["text", "names", "collisions", "structure"])
def test_corpus_text_is_inert_in_the_readme(name: str) -> None:
    readme, pyproject, tools = _project(CORPUS / f"{name}.json")
    assert tools > 0
    tokens = _check_structure(readme, tools)
    marked = [token for token in tokens if "PWNED" in token.content and not token.children]
    assert all(token.type in (*_ALLOWED_INLINE, "fence") for token in marked), {t.type for t in marked}
    assert (pyproject["project"]["name"], pyproject["project"]["version"]) == ("hostile-client", "1.0.0")
    assert pyproject["project"]["scripts"] == {"hostile-client": "hostile_client.__main__:main"}


def test_payloads_render_as_their_own_text(tmp_path: Path) -> None:
    tools = [
        {"name": f"tool_{i}", "description": text, "inputSchema": {"type": "object"}}
        for i, text in enumerate(PAYLOADS)
    ]
    spec = tmp_path / "x--->]]<script>`.json"  # the source name lands in both headers
    spec.write_text(json.dumps({"tools": tools}), "utf-8")
    readme, pyproject, count = _project(spec)
    assert pyproject["project"]["name"] == "hostile-client"
    tokens = _check_structure(readme, count)
    paragraphs = [
        tokens[i + 1]
        for i, token in enumerate(tokens)
        if token.type == "paragraph_open" and tokens[i + 1].type == "inline"
    ]
    for text in PAYLOADS:
        escaped = markdown_text(text)
        assert escaped in readme
        [inline] = [p for p in paragraphs if p.content == escaped]
        assert {child.type for child in inline.children} <= {"text"}
        assert "".join(child.content for child in inline.children) == " ".join(text.split())
    html = re.sub(r"<!--.*?-->", "", markdown_it.MarkdownIt("commonmark").render(readme), flags=re.S)
    assert "<script" not in html and "href" not in html and "<img" not in html and "<div" not in html
