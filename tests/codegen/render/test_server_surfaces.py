"""The generated server's resources, resource templates, prompts and completions (render/server_surfaces.py):
what base.py and the handlers.py scaffold gain, that hostile spec text stays data, that the package
serves through the runtime, and that a spec that grows a prompt or template gets stubs appended to
the user's handlers.py without touching a byte of what the user wrote.

The specs are `ValidatedSpec` objects built here (the loader that fills them from a spec file is
the client side's part of issue 22).
"""

from __future__ import annotations

import ast
import difflib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from codegen.pipeline import build_server
from codegen.spec import GeneratedPackage, ValidatedSpec
from codegen.write.handlers import add_stubs, check_handlers
from tests.support import ROOT

HOSTILE = 'x"""; import os; os.system("echo pwned") #\n\\'
TOOL = {"name": "read_docs", "description": "a tool", "inputSchema": {"type": "object"}}
RESOURCES = [
    {"uri": "file:///README.md", "name": "README", "mimeType": "text/markdown", "description": HOSTILE}
]
TEMPLATES = [
    {"uriTemplate": "file:///{path}{?rev}", "name": "docs", "description": HOSTILE},
    {"uriTemplate": "db://{class}/{self}", "name": HOSTILE},
]
PROMPTS = [
    {
        "name": "code_review",
        "description": "Review code",
        "arguments": [{"name": "code", "required": True, "description": HOSTILE}, {"name": "language"}],
    },
    {"name": "import", "arguments": [{"name": "ctx", "required": True}, {"name": "value"}]},
]
HANDLERS = '''\
from __future__ import annotations

from collections.abc import Mapping

from mcpgen_runtime.server import CompletionReturn, PromptReturn, RequestContext, ResourceNotFound
from mcpgen_runtime.server import ResourceReturn

from .base import ServerBase


class Server(ServerBase):
    """Mine."""

    async def read_static_resource(self, uri: str, ctx: RequestContext) -> ResourceReturn:
        return "# readme"  # my comment

    async def read_docs_(self, ctx: RequestContext, *, path: str, rev: str | None = None) -> ResourceReturn:
        if path == "missing":
            raise ResourceNotFound(ctx.method)
        return f"{path}@{rev}"

    async def prompt_import(
        self, ctx_: RequestContext, *, ctx: str, value: str | None = None
    ) -> PromptReturn:
        return f"ctx={ctx} value={value}"

    async def complete_prompt_import_ctx(
        self, value: str, context: Mapping[str, str], ctx: RequestContext
    ) -> CompletionReturn:
        return [value + "1", value + "2"]
'''


def spec(**surfaces: Any) -> ValidatedSpec:
    return ValidatedSpec(source="t.json", tools=[TOOL], digest="0" * 64, **surfaces)


def write(package: GeneratedPackage, root: Path, *, user: bool = True) -> Path:
    out = root / package.package
    for rel, data in {**package.files, **(package.user_files if user else {})}.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return out


def test_base_binds_every_template_prompt_and_argument_by_safe_names() -> None:
    package = build_server(
        spec(resources=RESOURCES, resource_templates=TEMPLATES, prompts=PROMPTS), package="demo_server"
    )
    base = package.files["base.py"].decode()
    tree = ast.parse(base)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ServerBase")
    methods = [n.name for n in cls.body if isinstance(n, ast.AsyncFunctionDef)]
    assert methods == [
        "read_docs",  # the tool
        "read_static_resource",
        "read_docs_",  # template "docs": its read_ name is the tool's, so it gets a suffix
        "read_x_import_os_os_system_echo_pwned",  # a hostile name, made an identifier
        "prompt_code_review",
        "prompt_import",
        "complete_read_docs_path",
        "complete_read_docs_rev",
        "complete_read_x_import_os_os_system_echo_pwned_class_",
        "complete_read_x_import_os_os_system_echo_pwned_self_",
        "complete_prompt_code_review_code",
        "complete_prompt_code_review_language",
        "complete_prompt_import_ctx",
        "complete_prompt_import_value",
    ]
    prompt_import = next(
        n for n in cls.body if isinstance(n, ast.AsyncFunctionDef) and n.name == "prompt_import"
    )
    # A prompt argument named ctx keeps its name; the context parameter steps aside.
    assert [a.arg for a in prompt_import.args.args] == ["self", "ctx_"]
    assert [a.arg for a in prompt_import.args.kwonlyargs] == ["ctx", "value"]
    # Hostile text is data: in docstrings (escaped) and surfaces.json, never in a statement or a name.
    docstrings = {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, (ast.AsyncFunctionDef, ast.ClassDef, ast.Module))
        and ast.get_docstring(n) is not None
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            assert "os.system(" not in node.value and '"""' not in node.value
        assert not (isinstance(node, ast.Attribute) and node.attr == "system")
    surfaces = json.loads(package.files["surfaces.json"])
    assert surfaces == {"resources": RESOURCES, "resourceTemplates": TEMPLATES, "prompts": PROMPTS}
    assert package.files["surfaces.json"].isascii()
    # The scaffold's docstring says where the exception it names comes from (it imports no more).
    assert "ResourceNotFound (from mcpgen_runtime.server)" in package.user_files["handlers.py"].decode()


def test_a_server_without_surfaces_is_unchanged() -> None:
    package = build_server(spec(), package="demo_server")
    assert "surfaces.json" not in package.files
    assert b"load_package_surfaces" not in package.files["base.py"]


def test_the_generated_package_serves_its_surfaces(tmp_path: Path) -> None:
    package = build_server(
        spec(resources=RESOURCES, resource_templates=TEMPLATES, prompts=PROMPTS), package="demo_server"
    )
    out = write(package, tmp_path)
    (out / "handlers.py").write_text(HANDLERS)
    script = f"""
import asyncio, json, sys
sys.path[:0] = [{str(tmp_path)!r}, {str(ROOT / "runtime")!r}, {str(ROOT)!r}]
from demo_server.handlers import Server
from tests.runtime.server_helpers import request
server = Server()
def ask(method, params=None):
    return asyncio.run(server.handle_message(request(1, method, params))).response
print(json.dumps([
    ask("resources/list")["result"]["resources"],
    ask("resources/read", {{"uri": "file:///a%20b?rev=7"}})["result"]["contents"],
    ask("resources/read", {{"uri": "file:///README.md"}})["result"]["contents"],
    ask("resources/read", {{"uri": "db://c/s"}})["error"],
    ask("prompts/get", {{"name": "import", "arguments": {{"ctx": "C"}}}})["result"]["messages"],
    ask("prompts/get", {{"name": "code_review", "arguments": {{}}}})["error"],
    ask("completion/complete", {{"ref": {{"type": "ref/prompt", "name": "import"}},
                                 "argument": {{"name": "ctx", "value": "v"}}}})["result"]["completion"],
    ask("completion/complete", {{"ref": {{"type": "ref/resource", "uri": "file:///{{path}}{{?rev}}"}},
                                 "argument": {{"name": "path", "value": "v"}}}})["result"]["completion"],
    ask("server/discover")["result"]["capabilities"],
]))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    listed, read, static, unimplemented, prompt, missing, completion, no_handler, caps = json.loads(
        done.stdout
    )
    assert listed == RESOURCES
    assert read == [{"uri": "file:///a%20b?rev=7", "text": "a b@7"}]
    assert static == [{"uri": "file:///README.md", "text": "# readme", "mimeType": "text/markdown"}]
    assert unimplemented["code"] == -32603 and "not implemented" in unimplemented["message"]
    assert prompt == [{"role": "user", "content": {"type": "text", "text": "ctx=C value=None"}}]
    assert missing["code"] == -32602  # the required argument `code`
    assert completion["values"] == ["v1", "v2"]
    assert no_handler["values"] == []  # the generated stub: no suggestions
    assert caps["resources"]["subscribe"] is True and "prompts" in caps and "completions" in caps


def test_new_declarations_get_stubs_and_the_users_code_is_untouched(tmp_path: Path) -> None:
    old = build_server(
        spec(resources=RESOURCES, resource_templates=TEMPLATES[:1], prompts=PROMPTS[1:]),
        package="demo_server",
    )
    out = write(old, tmp_path)
    (out / "handlers.py").write_text(HANDLERS)
    new = build_server(
        spec(resources=RESOURCES, resource_templates=TEMPLATES, prompts=PROMPTS), package="demo_server"
    )
    write(new, tmp_path, user=False)  # the generator rewrites what it owns, never handlers.py
    report = check_handlers(out, "demo_server", new.files, new.user_files["handlers.py"])
    assert report is not None and not report.broken
    stubbed = {method for _what, method in report.unimplemented}
    assert {"read_x_import_os_os_system_echo_pwned", "prompt_code_review"} <= stubbed
    assert "complete_prompt_code_review_code" in stubbed
    assert "read_docs_" not in stubbed and "prompt_import" not in stubbed
    updated = add_stubs(report).decode()
    # Only insertions: every line the user wrote is still there, unchanged and in order.
    matcher = difflib.SequenceMatcher(a=HANDLERS.splitlines(), b=updated.splitlines(), autojunk=False)
    assert {op for op, *_ in matcher.get_opcodes()} <= {"equal", "insert"}
    assert "async def prompt_code_review(" in updated and updated.count("async def read_docs_(") == 1
    compile(updated, "handlers.py", "exec")
    (out / "handlers.py").write_text(updated)
    again = check_handlers(out, "demo_server", new.files, new.user_files["handlers.py"])
    assert again is not None and not again.unimplemented


def test_mypy_strict_accepts_the_handlers_and_flags_a_wrong_override(tmp_path: Path) -> None:
    package = build_server(
        spec(resources=RESOURCES, resource_templates=TEMPLATES, prompts=PROMPTS), package="demo_server"
    )
    out = write(package, tmp_path)
    wrong = HANDLERS.replace("*, ctx: str, value: str | None = None", "*, ctx: int, value: str | None = None")
    assert wrong != HANDLERS
    results = []
    for text in (HANDLERS, wrong):
        (out / "handlers.py").write_text(text)
        done = subprocess.run(
            [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "-p", "demo_server"],
            cwd=tmp_path,
            env={"PATH": "/usr/bin:/bin", "MYPYPATH": str(ROOT / "runtime")},
            capture_output=True,
            text=True,
            timeout=300,
        )
        results.append(done)
    assert results[0].returncode == 0, results[0].stdout
    assert results[1].returncode == 1 and '"prompt_import" is incompatible' in results[1].stdout
