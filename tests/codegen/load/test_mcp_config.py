"""MCP config files read and resolved without starting anything (codegen/load/mcp_config.py).

The end-to-end proof (each format → working clients, the canary) is tests/interop/test_mcp_config_*.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codegen.load.launch import resolve_entry
from codegen.load.mcp_config import (
    McpConfigError,
    read_config,
    split_config_source,
    strip_jsonc,
    well_known_files,
)
from codegen.refs import escape_token

CONFIGS = Path(__file__).resolve().parents[2] / "interop" / "mcp_configs"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def write_json(path: Path, data: object) -> Path:
    return write(path, json.dumps(data))


# -- JSON with comments ----------------------------------------------------------------------------


def test_jsonc_comments_and_trailing_commas_go_strings_stay() -> None:
    text = """{
  // a line comment
  "a": "http://x/*not a comment*/ // nor this",  /* block
  comment */ "b": [1, 2,],
  "c": "quote \\" inside, // still a string",
}"""
    stripped = strip_jsonc(text)
    assert json.loads(stripped) == {
        "a": "http://x/*not a comment*/ // nor this",
        "b": [1, 2],
        "c": 'quote " inside, // still a string',
    }
    assert stripped.count("\n") == text.count("\n")  # line numbers in errors stay right


def test_invalid_json_names_the_file_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path / "mcp.json", '{\n  // ok\n  "mcpServers": {"a": {"command": "x",, }}\n}')
    with pytest.raises(McpConfigError, match=r"mcp.json: MCPGEN-CONFIG: invalid JSON at line 3 column 41: "):
        read_config(path)


def test_duplicate_members_are_refused(tmp_path: Path) -> None:
    path = write(tmp_path / "mcp.json", '{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}')
    with pytest.raises(McpConfigError, match=r"member 'a' appears twice"):
        read_config(path)


def test_invalid_toml_names_the_file(tmp_path: Path) -> None:
    path = write(tmp_path / "config.toml", "[mcp_servers.a\ncommand = 1\n")
    with pytest.raises(McpConfigError, match=r"config.toml: MCPGEN-CONFIG: invalid TOML: "):
        read_config(path)


# -- the formats, as the tools write them ----------------------------------------------------------


@pytest.mark.parametrize(
    ("fixture", "fmt"),
    [
        ("claude_desktop_config.json", "mcpServers"),
        ("cursor_mcp.json", "mcpServers"),
        ("claude_code.mcp.json", "mcpServers"),
        ("windsurf_mcp_config.json", "mcpServers"),
        ("vscode_mcp.json", "vscode"),
        ("codex_config.toml", "codex"),
    ],
)
def test_every_format_reads_its_servers(fixture: str, fmt: str) -> None:
    config = read_config(CONFIGS / fixture)
    assert config.format == fmt
    assert config.entries["everything"].transport == "stdio"
    assert config.entries["weather"].transport == "http"
    top = {"mcpServers": "/mcpServers", "vscode": "/servers", "codex": "/mcp_servers"}[fmt]
    assert config.entries["weather"].pointer == f"{top}/weather"


def test_types_and_switches(tmp_path: Path) -> None:
    path = write_json(
        tmp_path / "mcp.json",
        {
            "mcpServers": {
                "s": {"type": "sse", "url": "https://x/sse"},
                "h": {"type": "streamable-http", "url": "https://x/mcp"},
                "w": {"serverUrl": "https://x/mcp"},
                "off": {"command": "x", "disabled": True},
                "a/b~c": {"command": "x"},
            }
        },
    )
    config = read_config(path)
    assert {n: e.transport for n, e in config.entries.items()} == {
        "s": "sse",
        "h": "http",
        "w": "http",
        "off": "stdio",
        "a/b~c": "stdio",
    }
    assert [n for n, e in config.entries.items() if e.disabled] == ["off"]
    assert config.entries["a/b~c"].pointer == "/mcpServers/a~1b~0c"
    codex = read_config(write(tmp_path / "c.toml", '[mcp_servers.x]\ncommand = "y"\nenabled = false\n'))
    assert codex.entries["x"].disabled


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], r"at /: MCPGEN-CONFIG: expected an object, found an array"),
        ({"other": 1}, r"at /: MCPGEN-CONFIG: no servers: expected `mcpServers`"),
        ({"mcpServers": []}, r"at /mcpServers: MCPGEN-CONFIG: expected an object of servers, found an array"),
        ({"mcpServers": {"a": "npx"}}, r"server 'a' at /mcpServers/a: MCPGEN-CONFIG: expected an object"),
        ({"mcpServers": {"a": {}}}, r"server 'a' at /mcpServers/a: .*neither `command`"),
        (
            {"mcpServers": {"a": {"command": "x", "url": "http://y"}}},
            r"server 'a' at /mcpServers/a: .*both `command` and `url`",
        ),
        (
            {"mcpServers": {"a": {"type": "ws", "url": "x"}}},
            r"server 'a' at /mcpServers/a/type: .*unknown server type 'ws'",
        ),
        (
            {"mcpServers": {"a": {"type": "http", "command": "x"}}},
            r"server 'a' at /mcpServers/a: .*a http server needs `url`",
        ),
        ({"servers": {"a": {"type": "stdio", "url": "x"}}}, r"server 'a' at /servers/a: .*needs `command`"),
        ({"servers": {}, "inputs": {}}, r"at /inputs: MCPGEN-CONFIG: expected an array"),
    ],
)
def test_bad_shapes_name_file_server_and_pointer(tmp_path: Path, data: object, message: str) -> None:
    path = write_json(tmp_path / "mcp.json", data)
    with pytest.raises(McpConfigError, match=rf"^{path}: {message}"):
        read_config(path)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"command": 7}, r"at /mcpServers/a/command: MCPGEN-CONFIG: expected a string, found a number"),
        ({"command": " "}, r"at /mcpServers/a/command: MCPGEN-CONFIG: the command is empty"),
        ({"command": "x", "args": "-y"}, r"at /mcpServers/a/args: .*expected an array of strings"),
        (
            {"command": "x", "args": ["-y", 1]},
            r"at /mcpServers/a/args/1: .*expected a string, found a number",
        ),
        (
            {"command": "x", "env": {"K": True}},
            r"at /mcpServers/a/env/K: .*expected a string, found a boolean",
        ),
        ({"command": "x", "env": {"A=B": "v"}}, r"at /mcpServers/a/env/A=B: .*not an environment variable"),
        ({"url": "ftp://h/x"}, r"at /mcpServers/a/url: .*'ftp://h/x' is not an http\(s\) URL"),
        ({"url": "http://h", "headers": {"Bad Name": "v"}}, r"at /mcpServers/a/headers/Bad Name: .*header"),
        ({"url": "http://h", "headers": {"X": "${env:LF}"}}, r"at /mcpServers/a/headers/X: .*line break"),
        (
            {"command": "${env:NOPE}"},
            r"at /mcpServers/a/command: .*'NOPE' is not set \(used as \$\{env:NOPE\}\)",
        ),
        (
            {"command": "x", "args": ["${NOPE}"]},
            r"at /mcpServers/a/args/0: .*'NOPE' is not set \(used as \$\{NOPE\}\)",
        ),
        ({"url": "http://h/${env:LF}"}, r"at /mcpServers/a/url: .*whitespace or a control character"),
        ({"command": "${config:x}"}, r"at /mcpServers/a/command: .*unsupported variable \$\{config:x\}"),
        (
            {"command": "${input:key}"},
            r"at /mcpServers/a/command: .*\$\{input:key\} has no value: .*MCPGEN_INPUT_KEY",
        ),
    ],
)
def test_bad_entries_name_file_server_and_pointer(tmp_path: Path, entry: object, message: str) -> None:
    path = write_json(tmp_path / "mcp.json", {"mcpServers": {"a": entry}})
    with pytest.raises(McpConfigError, match=rf"^{path}: server 'a' {message}"):
        resolve_entry(read_config(path), "a", environ={"LF": "a\nb"})


def test_a_missing_server_lists_the_ones_there(tmp_path: Path) -> None:
    path = write_json(tmp_path / "mcp.json", {"servers": {"one": {"command": "x"}}})
    with pytest.raises(
        McpConfigError, match=r"server 'two' at /servers: .*no server named 'two' \(servers: 'one'\)"
    ):
        resolve_entry(read_config(path), "two")


# -- variables -------------------------------------------------------------------------------------


def test_variables_of_the_json_formats(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    path = write_json(
        project / ".vscode" / "mcp.json",
        {
            "inputs": [{"type": "promptString", "id": "api-key", "description": "API key", "password": True}],
            "servers": {
                "a": {
                    "type": "stdio",
                    "command": "${workspaceFolder}${/}bin${pathSeparator}server",
                    "args": ["${env:ONE}", "${TWO}", "${THREE:-fallback}", "${workspaceFolderBasename}"],
                    "env": {"KEY": "${input:api-key}", "PORT": 8080, "HOME_IS": "${userHome}"},
                    "cwd": "sub",
                },
            },
        },
    )
    launch = resolve_entry(
        read_config(path),
        "a",
        environ={"ONE": "1", "TWO": "two-value", "MCPGEN_INPUT_API_KEY": "sk-input"},
        home=tmp_path / "home",
    )
    assert launch.argv == (f"{project}/bin/server", "1", "two-value", "fallback", "proj")
    assert launch.env == {"KEY": "sk-input", "PORT": "8080", "HOME_IS": str(tmp_path / "home")}
    assert launch.cwd == str(project / "sub")
    assert launch.source == f"{path}#a"
    # values from the environment, inputs, env and headers are hidden in messages ("1" is too short)
    assert {"two-value", "sk-input", "8080"} <= set(launch.secrets) and "1" not in launch.secrets
    # a definition may not hold a credential: an input's value, or a value whose name says so (KEY);
    # ${TWO} and PORT's value are masked, but may appear in a definition
    assert launch.secrets.credentials == {"sk-input"}


def test_an_input_without_a_value_says_how_to_give_one(tmp_path: Path) -> None:
    path = write_json(
        tmp_path / ".vscode" / "mcp.json",
        {
            "inputs": [{"type": "promptString", "id": "api-key", "description": "API key"}],
            "servers": {"a": {"type": "http", "url": "https://h/mcp", "headers": {"K": "${input:api-key}"}}},
        },
    )
    with pytest.raises(McpConfigError) as caught:
        resolve_entry(read_config(path), "a", environ={})
    assert str(caught.value) == (
        f"{path}: server 'a' at /servers/a/headers/K: MCPGEN-CONFIG: ${{input:api-key}} ('API key') has no "
        "value: mcpgen does not prompt; set the environment variable MCPGEN_INPUT_API_KEY"
    )


def test_codex_expands_nothing_and_reads_tokens_from_named_variables(tmp_path: Path) -> None:
    path = write(
        tmp_path / "config.toml",
        """
[mcp_servers.local]
command = "npx"
args = ["-y", "${NOT_EXPANDED}"]
env = { "A" = "literal-value" }
env_vars = ["FORWARDED"]
cwd = "/srv"

[mcp_servers.remote]
url = "https://api.example.com/mcp?team=7"
bearer_token_env_var = "TOKEN_VAR"
http_headers = { "X-Region" = "eu" }
env_http_headers = { "X-Org" = "ORG_VAR" }
""",
    )
    environ = {"FORWARDED": "forwarded-value", "TOKEN_VAR": "tok-123456", "ORG_VAR": "org-42"}
    config = read_config(path)
    local = resolve_entry(config, "local", environ=environ)
    assert local.argv == ("npx", "-y", "${NOT_EXPANDED}")
    assert local.env == {"A": "literal-value", "FORWARDED": "forwarded-value"} and local.cwd == "/srv"
    remote = resolve_entry(config, "remote", environ=environ)
    assert remote.transport == "http" and remote.url == "https://api.example.com/mcp?team=7"
    assert remote.headers == {"X-Region": "eu", "X-Org": "org-42", "Authorization": "Bearer tok-123456"}
    assert {"tok-123456", "org-42", "team=7"} <= set(remote.secrets)
    assert "tok-123456" in remote.secrets.credentials and "org-42" not in remote.secrets.credentials
    with pytest.raises(
        McpConfigError, match=r"server 'remote' at /mcp_servers/remote/bearer_token_env_var: "
    ):
        resolve_entry(config, "remote", environ={"ORG_VAR": "x"})


def test_vscode_env_file(tmp_path: Path) -> None:
    write(tmp_path / "proj" / ".env", "# secrets\nexport A=one-value\nB='two value'\nnot a line\n")
    path = write_json(
        tmp_path / "proj" / ".vscode" / "mcp.json",
        {
            "servers": {
                "a": {
                    "type": "stdio",
                    "command": "x",
                    "envFile": "${workspaceFolder}/.env",
                    "env": {"B": "b"},
                }
            }
        },
    )
    launch = resolve_entry(read_config(path), "a", environ={})
    assert launch.env == {"A": "one-value", "B": "b"}
    assert "one-value" in launch.secrets


def test_stdio_servers_of_a_user_file_run_in_the_current_directory(tmp_path: Path) -> None:
    home = tmp_path / "home"
    path = write_json(home / ".cursor" / "mcp.json", {"mcpServers": {"a": {"command": "x"}}})
    launch = resolve_entry(read_config(path), "a", environ={}, cwd=tmp_path / "work", home=home)
    assert launch.cwd == str(tmp_path / "work")
    project = write_json(tmp_path / "p" / ".mcp.json", {"mcpServers": {"a": {"command": "x"}}})
    assert resolve_entry(read_config(project), "a", environ={}, home=home).cwd == str(tmp_path / "p")


# -- naming sources, finding files -----------------------------------------------------------------


def test_split_config_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / ".mcp.json", "{}")
    write(tmp_path / "odd#name.json", "{}")
    assert split_config_source(".mcp.json#github") == (Path(".mcp.json"), "github")
    assert split_config_source(".mcp.json#a#b") == (Path(".mcp.json"), "a#b")
    assert split_config_source("odd#name.json#srv") == (Path("odd#name.json"), "srv")
    assert split_config_source("odd#name.json") is None  # the whole source is a file
    assert split_config_source("missing.json#x") is None
    assert split_config_source("https://h/mcp#frag") is None
    assert split_config_source(".mcp.json#") is None
    assert split_config_source("sub/.mcp.json#x", tmp_path.parent) is None
    assert split_config_source(f"{tmp_path.name}/.mcp.json#x", tmp_path.parent) == (
        tmp_path.parent / tmp_path.name / ".mcp.json",
        "x",
    )


def test_well_known_files_per_platform(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "proj"
    linux = {(host, str(path)) for _scope, host, path in well_known_files(cwd, home, "linux", {})}
    assert ("Claude Desktop", f"{home}/.config/Claude/claude_desktop_config.json") in linux
    assert ("Windsurf", f"{home}/.codeium/windsurf/mcp_config.json") in linux
    assert ("Codex", f"{home}/.codex/config.toml") in linux and (
        "Codex",
        f"{cwd}/.codex/config.toml",
    ) in linux
    assert ("VS Code", f"{cwd}/.vscode/mcp.json") in linux and (
        "Claude Code",
        f"{home}/.claude.json",
    ) in linux
    mac = {str(path) for _s, _h, path in well_known_files(cwd, home, "darwin", {"CODEX_HOME": "/c"})}
    assert f"{home}/Library/Application Support/Claude/claude_desktop_config.json" in mac
    assert f"{home}/Library/Application Support/Code/User/mcp.json" in mac
    assert ("VS Code", f"{home}/.config/Code/User/mcp.json") in linux
    assert "/c/config.toml" in mac
    at_home = well_known_files(home, home, "linux", {})  # run in the home directory: each file once
    assert [p for _s, _h, p in at_home].count(home / ".cursor" / "mcp.json") == 1


def test_claude_json_without_servers_is_empty_not_an_error(tmp_path: Path) -> None:
    path = write_json(tmp_path / ".claude.json", {"numStartups": 3, "projects": {}})
    assert read_config(path).entries == {}


def test_claude_json_holds_user_servers_and_this_projects_local_ones(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    path = write_json(
        tmp_path / ".claude.json",
        {
            "mcpServers": {
                "shared": {"command": "user-one"},
                "docs": {"type": "http", "url": "https://d/mcp"},
            },
            "projects": {
                str(project): {"mcpServers": {"shared": {"command": "local-one"}, "db": {"command": "db"}}},
                "/elsewhere": {"mcpServers": {"other": {"command": "x"}}},
            },
        },
    )
    config = read_config(path, cwd=project)
    assert list(config.entries) == ["docs", "shared", "db"]
    assert config.entries["shared"].pointer == f"/projects/{escape_token(str(project))}/mcpServers/shared"
    assert resolve_entry(config, "shared", environ={}).argv == ("local-one",)
    assert list(read_config(path, cwd=tmp_path).entries) == ["shared", "docs"]
