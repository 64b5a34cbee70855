"""RENDER the project around a client package (`mcpgen client --project DIR`): `pyproject.toml`
and `README.md`, as text.

Layout (src layout, so tests and tools import the installed package, not the checkout):

    DIR/pyproject.toml     generated, with two sections that are yours (below)
    DIR/README.md          generated, with one section that is yours
    DIR/src/PKG/...        the client package (`render.package`), py.typed included

Both files open with a generated header and are rewritten by every run, except the lines between
a `>>> mcpgen: yours (NAME)` marker line and its `<<< mcpgen: yours (NAME)` line: those are the
user's, written once with the content below and then carried over byte for byte
(`write.project` merges them back). In pyproject.toml `dependencies` holds one (extra
dependencies) and `[project]` another (more keys such as `authors`, `license`, `urls`, and tables
of your own); in README.md the introduction is yours.

Nothing a server says becomes code or TOML: the distribution name and version are checked against
PEP 508 / PEP 440 before they are written (`check_project_name`, `check_project_version`), the rest
of pyproject.toml is fixed text and the package's own identifiers. In README.md, tool names and
descriptions are escaped for Markdown (`markdown_text`: every ASCII punctuation character
backslash-escaped, `<`, `>` and `&` as entities, control and bidi characters dropped, lines joined),
and signatures and example calls sit in code fences longer than any backtick run they contain.
"""

from __future__ import annotations

import ast
import re
import string
from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import InternalGeneratorError, McpgenError
from ..model.ir import PackageIR, ToolIR
from .python import spelling

__all__ = [
    "PROJECT_MARKERS",
    "ProjectError",
    "ProjectMeta",
    "check_project_name",
    "check_project_version",
    "console_script_name",
    "markdown_text",
    "region_markers",
    "render_project",
    "runtime_requirement",
]

# PEP 508 distribution names (case-insensitive) and PEP 440 public versions (packaging's
# VERSION_PATTERN without the local part, which package indexes refuse).
_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,98}[A-Za-z0-9])?\Z")
_VERSION = re.compile(
    r"""v?(?:[0-9]+!)?[0-9]+(?:\.[0-9]+)*
    (?:[-_.]?(?:a|b|c|rc|alpha|beta|pre|preview)[-_.]?[0-9]*)?
    (?:-[0-9]+|[-_.]?(?:post|rev|r)[-_.]?[0-9]*)?
    (?:[-_.]?dev[-_.]?[0-9]*)?\Z""",
    re.VERBOSE | re.IGNORECASE,
)
_MAX_VERSION_CHARS = 64
_MARKDOWN_ENTITIES = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}
_DESCRIPTION_CHARS = 2000  # of one tool's description in README.md

PYPROJECT = "pyproject.toml"
README = "README.md"
# file -> how a marker line opens and closes (a comment in each file's syntax)
PROJECT_MARKERS: dict[str, tuple[str, str]] = {PYPROJECT: ("# ", ""), README: ("<!-- ", " -->")}


class ProjectError(McpgenError):
    """A project name or version that cannot be published, or a project that cannot be written."""


def _fix(where: str, flag: str) -> str:
    return "" if flag.startswith(where) else f"; pass {flag}"


def check_project_name(name: str, where: str) -> str:
    """`name` when it is a PEP 508 distribution name; else ProjectError naming `where` (the flag or
    the place it came from)."""
    if not _NAME.match(name):
        raise ProjectError(
            f"{where}: {name[:100]!r} is not a valid distribution name (PEP 508: ASCII letters and digits, "
            "'.', '_' or '-' inside, at most 100 characters)" + _fix(where, "--project-name NAME")
        )
    return name


def check_project_version(version: str, where: str) -> str:
    """`version` when it is a PEP 440 public version; else ProjectError naming `where`."""
    if len(version) > _MAX_VERSION_CHARS or not _VERSION.match(version):
        raise ProjectError(
            f"{where}: {version[:100]!r} is not a PEP 440 version such as 1.2.0 or 1.2.0rc1 (local "
            "versions, '+...', are refused by package indexes)" + _fix(where, "--project-version VERSION")
        )
    return version


def console_script_name(package: str) -> str:
    """The console script of a package: its name in kebab case (`weather_client` -> `weather-client`)."""
    return package.replace("_", "-").strip("-") or package


def runtime_requirement(runtime_version: str) -> str:
    """`mcpgen-runtime[cli]>=X.Y,<X+1` for the runtime version the package was generated for."""
    match = re.match(r"(\d+)\.(\d+)", runtime_version)
    if match is None:
        raise InternalGeneratorError(f"runtime version {runtime_version!r} is not X.Y[...]")
    major, minor = int(match[1]), int(match[2])
    return f"mcpgen-runtime[cli]>={major}.{minor},<{major + 1}"


@dataclass(frozen=True)
class ProjectMeta:
    """What the project files say besides the tools: all checked before they get here."""

    name: str  # PEP 508
    version: str  # PEP 440
    script: str  # the console script (`console_script_name(package)`)
    requirement: str  # `runtime_requirement(...)`


def region_markers(file: str, name: str) -> tuple[str, str]:
    """The begin and end lines of the user section `name` of `file` (without newlines)."""
    open_, close = PROJECT_MARKERS[file]
    return (f"{open_}>>> mcpgen: yours ({name}){close}", f"{open_}<<< mcpgen: yours ({name}){close}")


def _region(file: str, name: str, content: str, indent: str = "") -> str:
    begin, end = region_markers(file, name)
    return f"{indent}{begin}\n{content}{indent}{end}\n"


def _toml_string(value: str) -> str:
    """A TOML basic string of checked ASCII text (names, versions, identifiers)."""
    if not value.isascii() or any(c in value for c in '"\\') or not value.isprintable():
        raise InternalGeneratorError(f"{value!r} was not checked before it reached pyproject.toml")
    return f'"{value}"'


def _header_fields(ir: PackageIR) -> str:
    source = spelling.clean_text(ir.source or "<unknown>", keep_newlines=False, max_chars=300)
    return f"mcpgen {ir.generator_version} from {source} (sha256 {ir.digest})"


def _pyproject(ir: PackageIR, meta: ProjectMeta) -> str:
    package = ir.package
    header = _header_fields(ir).replace("\n", " ")
    return (
        f"# Generated by {header}.\n"
        "# mcpgen rewrites this file; the lines between the '>>> mcpgen: yours' and '<<< mcpgen: yours'\n"
        "# markers are yours and kept byte for byte. Everything else: change the mcpgen command or target.\n"
        "[build-system]\n"
        'requires = ["hatchling>=1.25"]\n'
        'build-backend = "hatchling.build"\n'
        "\n"
        "[project]\n"
        f"name = {_toml_string(meta.name)}\n"
        f"version = {_toml_string(meta.version)}\n"
        f"description = {_toml_string(f'Typed Python client for the MCP tools of {meta.name}')}\n"
        'readme = "README.md"\n'
        'requires-python = ">=3.11"\n'
        "dependencies = [\n"
        f"  {_toml_string(meta.requirement)},\n"
        + _region(PYPROJECT, "dependencies", "", indent="  ")
        + "]\n"
        + _region(
            PYPROJECT,
            "project",
            "# More [project] keys (authors, license, classifiers) and tables of your own\n"
            "# ([project.urls]).\n",
        )
        + "\n"
        "[project.scripts]\n"
        f"{meta.script} = {_toml_string(f'{package}.__main__:main')}\n"
        "\n"
        "[tool.hatch.build.targets.wheel]\n"
        f"packages = [{_toml_string(f'src/{package}')}]\n"
        'exclude = ["**/.mcpgen-manifest.json"]\n'
    )


def markdown_text(text: str, max_chars: int = _DESCRIPTION_CHARS) -> str:
    """Untrusted text as inert Markdown: one paragraph, every ASCII punctuation character escaped
    (no emphasis, links, code spans, tables, headings or lists can start), `<` `>` `&` as entities
    (no HTML, autolinks or character references), control and bidi characters dropped."""
    cleaned = " ".join(spelling.clean_text(text, keep_newlines=False, max_chars=max_chars).split())
    out = []
    for char in cleaned:
        if char in _MARKDOWN_ENTITIES:
            out.append(_MARKDOWN_ENTITIES[char])
        elif char in string.punctuation:
            out.append("\\" + char)
        else:
            out.append(char)
    return "".join(out)


def _fenced(code: str, info: str = "python") -> str:
    longest = max((len(run) for run in re.findall(r"`+", code)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{code}\n{fence}\n"


def _signatures(client_py: str) -> dict[str, tuple[str, list[ast.arg], set[str]]]:
    """method name -> (one-line signature, its parameters, the keyword-only ones), read from the
    generated client.py's `Client` class (`_m.` shown as `models.`)."""
    module = ast.parse(client_py)
    found: dict[str, tuple[str, list[ast.arg], set[str]]] = {}
    for node in module.body:
        if isinstance(node, ast.ClassDef) and node.name == "Client":
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    returns = f" -> {ast.unparse(item.returns)}" if item.returns is not None else ""
                    text = f"def {item.name}({ast.unparse(item.args)}){returns}: ...".replace(
                        "_m.", "models."
                    )
                    params = [*item.args.args[1:], *item.args.kwonlyargs]
                    kwonly = {arg.arg for arg in item.args.kwonlyargs}
                    found[item.name] = (text, params, kwonly)
    return found


_PLACEHOLDERS = {"str": '"..."', "int": "0", "float": "0.0", "int | float": "0", "bool": "False"}


def _placeholder(arg: ast.arg) -> str:
    annotation = ast.unparse(arg.annotation) if arg.annotation is not None else ""
    if annotation in _PLACEHOLDERS:
        return _PLACEHOLDERS[annotation]
    if annotation.startswith(("list[", "tuple[", "Sequence[")):
        return "[]"
    if annotation.startswith(("dict[", "Mapping[")):
        return "{}"
    if annotation.startswith("_m.") and annotation[3:].isidentifier():
        return f"models.{annotation[3:]}(...)"
    return "..."


def _example(tool: ToolIR, params: list[ast.arg], kwonly: set[str]) -> str:
    """One call with every required parameter, placeholders by type (never schema text)."""
    if tool.input_root is not None:
        return f"client.{tool.method_name}({{}})"
    required = {param.name for param in tool.params if param.required}
    parts = []
    for arg in params:
        if arg.arg not in required:
            continue
        value = _placeholder(arg)
        parts.append(f"{arg.arg}={value}" if arg.arg in kwonly else value)
    return f"result = client.{tool.method_name}({', '.join(parts)})"


def _readme(ir: PackageIR, meta: ProjectMeta, client_py: str) -> str:
    signatures = _signatures(client_py)
    package = ir.package
    header = _header_fields(ir)
    while "--" in header:  # an HTML comment may not hold "--" (a source named "a--->b" must not end it)
        header = header.replace("--", "- -")
    lines = [
        f"<!-- Generated by {header}. mcpgen rewrites this file; the lines between the "
        "'>>> mcpgen: yours' and '<<< mcpgen: yours' markers are yours and kept byte for byte. -->\n",
        f"# {meta.name}\n",
        "\n",
        _region(
            README,
            "about",
            f"Typed Python client for the MCP tools of {meta.name}: one typed method per tool, on a "
            "blocking `Client` and an asyncio `AsyncClient`, and a command line.\n",
        ),
        "\n## Install\n\n",
        _fenced(f"pip install {meta.name}", "sh"),
        f"\nIt depends on `{meta.requirement}` (pydantic, httpx, orjson, jsonschema, click).\n",
        "\n## Use\n\n",
        _fenced(
            f"from {package} import AsyncClient, Client, models\n\n"
            f'with Client("https://example.com/mcp") as client:   # or Client.stdio(["server-command"])\n'
            "    ...  # one method per tool, below"
        ),
        "\nFrom a shell:\n\n",
        _fenced(f"{meta.script} --url https://example.com/mcp --help   # the tools, then TOOL --help", "sh"),
        f"\n## Tools\n\n{len(ir.tools)} tool(s). Each method returns the tool's output model (or a "
        "`ToolResult` for tools without an output schema) and raises `ToolError` when the tool fails.\n",
    ]
    for tool in ir.tools:
        signature = signatures.get(tool.method_name)
        if signature is None:
            raise InternalGeneratorError(f"client.py has no method {tool.method_name!r}")
        text, params, kwonly = signature
        lines.append(f"\n### {markdown_text(tool.wire_name, 200)}\n\n")
        description = tool.description or tool.title or ""
        if description.strip():
            lines.append(markdown_text(description) + "\n\n")
        lines.append(_fenced(f"{text}\n\n{_example(tool, params, kwonly)}"))
    lines += _surfaces_section(ir, signatures)
    return "".join(lines)


def _surfaces_section(
    ir: PackageIR, signatures: Mapping[str, tuple[str, list[ast.arg], set[str]]]
) -> list[str]:
    """Resource templates and prompts (issue 22): only when the server has some, so the README of a
    tools-only project stays as it was."""
    surfaces = ir.surfaces
    if not (surfaces.templates or surfaces.prompts or surfaces.resources):
        return []
    lines = [
        "\n## Resources and prompts\n\n"
        f"{len(surfaces.resources)} static resource(s) (`Resources.NAME`, read with `client.read_resource`), "
        f"{len(surfaces.templates)} resource template(s) (`read_*` methods: a `ReadResourceResult`) and "
        f"{len(surfaces.prompts)} prompt(s) (`prompt_*` methods: a `PromptResult`).\n"
    ]
    entries = [(t.wire_name, t.method_name, t.description or t.title or "") for t in surfaces.templates]
    entries += [(p.wire_name, p.method_name, p.description or p.title or "") for p in surfaces.prompts]
    for wire, method, description in entries:
        signature = signatures.get(method)
        if signature is None:
            raise InternalGeneratorError(f"client.py has no method {method!r}")
        lines.append(f"\n### {markdown_text(wire, 200)}\n\n")
        if description.strip():
            lines.append(markdown_text(description) + "\n\n")
        lines.append(_fenced(signature[0]))
    return lines


def render_project(ir: PackageIR, meta: ProjectMeta, client_files: Mapping[str, bytes]) -> dict[str, str]:
    """`pyproject.toml` and `README.md` of the project around the client package `client_files`
    (the user sections hold their first content; `write.project` keeps the user's)."""
    client_py = client_files["client.py"].decode("utf-8")
    return {PYPROJECT: _pyproject(ir, meta), README: _readme(ir, meta, client_py)}
