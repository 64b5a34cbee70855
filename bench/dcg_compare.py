"""mcpgen's models against datamodel-code-generator's (its defaults, the version pinned in
bench/requirements-dcg.txt, run from its own venv bench/.venv-dcg: never a dependency of mcpgen).

    python -m bench.dcg_compare [--tools N]      (python -m bench runs it; output goes to RESULTS.md)

Measured, and nothing else:

1. Robustness: both generators on every inputSchema and outputSchema of the synthetic spec
   (specs/tools/make_synthetic.py, 1,000 tools), one schema at a time for datamodel-code-generator:
   how many fail, and the time taken.
2. Type checking: mypy (default settings) and pyright (basic) on what each generator wrote for the
   ten richest real input schemas in ../shared/realworld (most subschemas first): error counts.
   (Tool lists that break the MCP spec on purpose, the conformance fixtures `*invalid*` and
   `*number-alpha*`, are left out.)
3. Accuracy: for each of those ten schemas, instances built from the schema (a full and a
   minimal one) and mutated (a wrong type, `null`, a string for a number, a missing required
   member, an unknown member, a value outside an enum), each labelled valid or invalid by
   jsonschema; a generator's model judges an instance right when it accepts exactly the valid
   ones. mcpgen's model is the tool's input model from a generated client.
"""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import click
from jsonschema import Draft7Validator, Draft202012Validator

from . import _cli

ROOT = Path(__file__).resolve().parent.parent
DCG_PYTHON = ROOT / "bench" / ".venv-dcg" / "bin" / "python"
WORKER = ROOT / "bench" / "_dcg_worker.py"
REALWORLD = ROOT.parent / "shared" / "realworld"
BIN = Path(sys.executable).parent


def _dcg_version() -> str:
    done = subprocess.run(
        [
            str(DCG_PYTHON),
            "-c",
            "import importlib.metadata as m; print(m.version('datamodel-code-generator'))",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() or "unknown"


# ------------------------------------------------------------------------------------------ schemas


def _subschemas(schema: Any) -> int:
    count, stack = 0, [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            count += 1
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return count


def _richest_real(count: int) -> list[dict[str, Any]]:
    tools = []
    for path in sorted(REALWORLD.glob("*.json")):
        if "invalid" in path.name or "number-alpha" in path.name:  # tools that break the spec on purpose
            continue
        tools += [
            tool
            for tool in json.loads(path.read_text("utf-8"))["tools"]
            if isinstance(tool.get("inputSchema"), dict) and isinstance(tool.get("name"), str)
        ]
    tools.sort(key=lambda tool: (-_subschemas(tool["inputSchema"]), tool["name"]))
    unique: dict[str, dict[str, Any]] = {}
    for tool in tools:  # one tool per name (two conformance fixtures share a tool)
        unique.setdefault(tool["name"], tool)
    return list(unique.values())[:count]


# ---------------------------------------------------------------------------------------- instances


def _resolve(root: Any, ref: str) -> Any:
    node = root
    for token in ref.removeprefix("#").split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        node = node[int(token)] if isinstance(node, list) else node.get(token, {})
    return node


def _sample(schema: Any, root: Any, *, full: bool, depth: int = 0) -> Any:
    """A value the schema most likely accepts (jsonschema has the last word)."""
    if not isinstance(schema, dict) or depth > 8:
        return "x"
    if "$ref" in schema:
        return _sample(_resolve(root, schema["$ref"]), root, full=full, depth=depth + 1)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    kind = schema.get("type")
    if schema.get("allOf") and kind in (None, "object"):
        merged = {key: value for key, value in schema.items() if key != "allOf"}
        for branch in schema["allOf"]:
            branch = (
                _resolve(root, branch["$ref"]) if isinstance(branch, dict) and "$ref" in branch else branch
            )
            if isinstance(branch, dict):
                merged["properties"] = {**merged.get("properties", {}), **branch.get("properties", {})}
                merged["required"] = [*merged.get("required", []), *branch.get("required", [])]
        return _sample(merged, root, full=full, depth=depth + 1)
    for key in ("anyOf", "oneOf"):
        if schema.get(key) and not (kind == "object" or "properties" in schema):
            return _sample(schema[key][0], root, full=full, depth=depth + 1)
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        names = list(props) if full else list(schema.get("required", []))
        return {name: _sample(props.get(name, {}), root, full=full, depth=depth + 1) for name in names}
    if kind == "array":
        return [
            _sample(schema.get("items", {}), root, full=full, depth=depth + 1)
            for _ in range(max(1, schema.get("minItems", 1)))
        ]
    if kind == "integer":
        return max(1, schema.get("minimum", 1))
    if kind == "number":
        return max(2, schema.get("minimum", 2))  # a JSON integer, which `number` allows
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    text = "2024-01-02T03:04:05Z" if schema.get("format") == "date-time" else "value"
    return text * max(1, -(-schema.get("minLength", 1) // len(text)))


_WRONG = {"string": 12345, "integer": "10", "number": "1.5", "boolean": "yes", "array": "x", "object": "x"}


def _instances(schema: dict[str, Any]) -> list[Any]:
    full, minimal = _sample(schema, schema, full=True), _sample(schema, schema, full=False)
    if not (isinstance(full, dict) and isinstance(minimal, dict)):
        return [full, minimal]
    out: list[Any] = [full, minimal, {**full, "unexpectedMember": 1}]
    props = schema.get("properties", {})
    for name in list(props)[:6]:
        prop = props[name] if isinstance(props[name], dict) else {}
        kind = prop.get("type")
        kind = kind if isinstance(kind, str) else "string"
        out.append({**minimal, name: _WRONG.get(kind, 12345)})
        out.append({**minimal, name: None})
        if kind == "integer":
            out.append({**minimal, name: 1.5})
        if prop.get("enum"):
            out.append({**minimal, name: "not-a-member"})
    for name in schema.get("required", [])[:3]:
        out.append({key: value for key, value in full.items() if key != name})
    unique: list[Any] = []
    for instance in out:
        if instance not in unique:
            unique.append(instance)
    return unique


def _validator(schema: dict[str, Any]) -> Any:
    draft7 = "draft-07" in str(schema.get("$schema", ""))
    return (Draft7Validator if draft7 else Draft202012Validator)(schema)


# ------------------------------------------------------------------------------------------ running


def _typecheck(paths: list[Path]) -> dict[str, Any]:
    files = sorted(str(path) for path in paths)
    if not files:
        return {"mypy_errors": "-", "mypy_codes": {}, "pyright_errors": "-", "pyright_rules": {}}
    mypy = subprocess.run(
        [
            str(BIN / "mypy"),
            "--no-incremental",
            "--ignore-missing-imports",
            "--follow-imports=silent",
            "--no-error-summary",
            *files,
        ],
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    mypy_codes = Counter(re.findall(r"\[([a-z-]+)\]$", mypy.stdout, re.M))
    pyright = subprocess.run(
        [str(BIN / "pyright"), "--outputjson", *files],
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    try:
        diagnostics = json.loads(pyright.stdout)["generalDiagnostics"]
    except (ValueError, KeyError):
        diagnostics = []
    errors = [d for d in diagnostics if d.get("severity") == "error"]
    return {
        "mypy_errors": sum(mypy_codes.values()) or mypy.stdout.count(": error:"),
        "mypy_codes": dict(mypy_codes.most_common(4)),
        "pyright_errors": len(errors),
        "pyright_rules": dict(Counter(d.get("rule", "?") for d in errors).most_common(4)),
    }


def _dcg_generate(schemas: dict[str, Any], work: Path) -> tuple[dict[str, Any], Path, float]:
    source, out = work / "in", work / "out"
    source.mkdir()
    for stem, schema in schemas.items():
        (source / f"{stem}.json").write_text(json.dumps(schema), "utf-8")
    started = time.perf_counter()
    done = subprocess.run(
        [str(DCG_PYTHON), str(WORKER), "generate", str(source), str(out)],
        capture_output=True,
        text=True,
        timeout=3600,
        check=False,
    )
    if done.returncode:
        raise SystemExit(f"datamodel-code-generator worker failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout), out, time.perf_counter() - started


def _mcpgen_build(
    tools: list[dict[str, Any]], work: Path, package: str
) -> tuple[Any, Path, float, str | None]:
    from codegen.load.document import spec_from_document
    from codegen.model.build import build_ir
    from codegen.pipeline import build_client
    from codegen.validate.checks import validate
    from codegen.write.package import write_package

    started = time.perf_counter()
    try:
        spec = validate(spec_from_document({"tools": tools}, "bench"))
        write_package(work, build_client(spec, package=package))
    except Exception as exc:  # a failure is a result here
        return None, work / package, time.perf_counter() - started, f"{type(exc).__name__}: {exc}"[:300]
    return build_ir(spec, package=package), work / package, time.perf_counter() - started, None


def _pattern_counts(directory: Path) -> dict[str, int]:
    text = "".join(path.read_text("utf-8") for path in directory.rglob("*.py"))
    return {
        "con*() annotations": len(re.findall(r"\bcon(?:str|int|float|list|set|bytes|decimal)\(", text)),
        "Enum classes": len(re.findall(r"^class \w+\((?:str, )?Enum\)", text, re.M)),
    }


def _synthetic(work: Path, tools_count: int) -> list[str]:
    path = work / "synthetic.json"
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "specs" / "tools" / "make_synthetic.py"),
            "--tools",
            str(tools_count),
            "-o",
            str(path),
        ],
        check=True,
    )
    synthetic = json.loads(path.read_text("utf-8"))["tools"]
    schemas = {
        f"t{i:04d}_{member}": tool[member]
        for i, tool in enumerate(synthetic)
        for member in ("inputSchema", "outputSchema")
        if isinstance(tool.get(member), dict)
    }
    (work / "synth").mkdir()
    report, _, dcg_seconds = _dcg_generate(schemas, work / "synth")
    failed = {stem: entry["error"] for stem, entry in report.items() if not entry["ok"]}
    _, _, mcpgen_seconds, mcpgen_error = _mcpgen_build(synthetic, work / "synth", "synthetic_client")
    lines = [
        "### Robustness: the synthetic spec",
        "",
        f"{len(synthetic)} tools, {len(schemas)} schemas (inputSchema and outputSchema).",
        "",
        "| generator | failures | time |",
        "|---|---|---|",
        f"| datamodel-code-generator, one schema at a time | {len(failed)} of {len(schemas)} | "
        f"{dcg_seconds:.0f} s |",
        f"| mcpgen, one client package | {'1 (' + mcpgen_error + ')' if mcpgen_error else 0} | "
        f"{mcpgen_seconds:.1f} s |",
        "",
    ]
    return lines + [f"- {stem}: {error}" for stem, error in sorted(failed.items())[:5]]


def run(tools_count: int) -> str:
    lines = [
        f"datamodel-code-generator {_dcg_version()} (defaults, bench/.venv-dcg) against mcpgen "
        f"{importlib.import_module('mcpgen_runtime._version').__version__}.",
        "",
    ]
    with tempfile.TemporaryDirectory(prefix="mcpgen-dcg-") as tmp:
        work = Path(tmp)
        if tools_count:
            lines += _synthetic(work, tools_count)
        if not REALWORLD.is_dir():
            lines += [
                "",
                "../shared/realworld is absent: the type-check and accuracy comparison did not run.",
            ]
            return "\n".join(lines)
        real = _richest_real(10)
        real_schemas = {f"r{i:02d}_{tool['name']}": tool["inputSchema"] for i, tool in enumerate(real)}
        (work / "real").mkdir()
        real_report, dcg_out, _ = _dcg_generate(real_schemas, work / "real")
        ir, mcpgen_dir, _, real_error = _mcpgen_build(real, work / "real", "real_client")
        lines += [
            "",
            "### Type checking and accuracy: the ten richest real input schemas",
            "",
            "Schemas (most subschemas first): " + ", ".join(f"`{tool['name']}`" for tool in real) + ".",
            "",
        ]
        cases = {stem: _instances(schema) for stem, schema in real_schemas.items()}
        labels = {
            stem: [_validator(real_schemas[stem]).is_valid(instance) for instance in instances]
            for stem, instances in cases.items()
        }
        cases_file = work / "cases.json"
        cases_file.write_text(json.dumps(cases), "utf-8")
        judged = subprocess.run(
            [str(DCG_PYTHON), str(WORKER), "judge", str(dcg_out), str(cases_file)],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        dcg_judged = json.loads(judged.stdout) if judged.returncode == 0 else {"verdicts": {}, "echoes": {}}
        dcg_verdicts, dcg_echoes = dcg_judged["verdicts"], dcg_judged["echoes"]
        mcpgen_verdicts: dict[str, list[bool | None]] = {}
        mcpgen_echoes: dict[str, list[Any]] = {}
        if ir is not None:
            sys.path.insert(0, str(work / "real"))
            models = importlib.import_module("real_client.models")
            from pydantic import ValidationError

            planned = {tool_ir.wire_name: tool_ir for tool_ir in ir.tools}
            for (stem, instances), tool in zip(cases.items(), real, strict=True):
                if tool["name"] not in planned:  # excluded by validation: no verdict
                    continue
                model = getattr(models, planned[tool["name"]].input_class)
                row: list[bool | None] = []
                same: list[Any] = []
                for instance in instances:
                    try:
                        parsed = model.model_validate(instance)
                        row.append(True)
                        dumped = parsed.model_dump(mode="json", by_alias=True, exclude_unset=True)
                        same.append(
                            True
                            if json.dumps(dumped, sort_keys=True) == json.dumps(instance, sort_keys=True)
                            else {"sent": dumped}
                        )  # as JSON text: 2 and 2.0 differ on the wire
                    except ValidationError:
                        row.append(False)
                        same.append(None)
                mcpgen_verdicts[stem] = row
                mcpgen_echoes[stem] = same
        total = sum(map(len, labels.values()))
        valid = sum(sum(row) for row in labels.values())

        def right(verdicts: dict[str, list[bool | None]]) -> tuple[int, int, int, int]:
            ok = wrong_accept = wrong_reject = none = 0
            for stem, row in labels.items():
                for label, verdict in zip(row, verdicts.get(stem, [None] * len(row)), strict=True):
                    ok += verdict == label
                    wrong_accept += verdict is True and not label
                    wrong_reject += verdict is False and label
                    none += verdict is None
            return ok, wrong_accept, wrong_reject, none

        dcg_checks = _typecheck(sorted(dcg_out.glob("*.py")))
        mcpgen_checks = _typecheck([mcpgen_dir / "models.py"] if ir is not None else [])
        dcg_right, mcpgen_right = right(dcg_verdicts), right(mcpgen_verdicts)

        def changed(echoes: dict[str, list[Any]]) -> list[tuple[str, Any, Any]]:
            """Valid instances accepted whose dump (by alias, set fields only) differs from the input."""
            return [
                (stem, instance, echo["sent"])
                for stem, row in labels.items()
                for instance, label, echo in zip(cases[stem], row, echoes.get(stem, []), strict=False)
                if label and isinstance(echo, dict)
            ]

        dcg_failed = [stem for stem, entry in real_report.items() if not entry["ok"]]
        lines += [
            f"{total} instances, {valid} of them valid according to jsonschema.",
            "",
            "| | datamodel-code-generator | mcpgen |",
            "|---|---|---|",
            f"| schemas that failed to generate | {len(dcg_failed)} | {1 if real_error else 0} |",
            f"| instances judged right | {dcg_right[0]}/{total} | {mcpgen_right[0]}/{total} |",
            f"| invalid instances accepted | {dcg_right[1]} | {mcpgen_right[1]} |",
            f"| valid instances rejected | {dcg_right[2]} | {mcpgen_right[2]} |",
            f"| no verdict (no model, or it raised) | {dcg_right[3]} | {mcpgen_right[3]} |",
            f"| valid instances changed by a round trip (`model_dump(mode='json', by_alias=True, "
            f"exclude_unset=True)`) | {len(changed(dcg_echoes))} | {len(changed(mcpgen_echoes))} |",
            "| mypy errors (default settings; mcpgen: models.py) | "
            f"{dcg_checks['mypy_errors']} {dcg_checks['mypy_codes'] or ''} | "
            f"{mcpgen_checks['mypy_errors']} {mcpgen_checks['mypy_codes'] or ''} |",
            f"| pyright errors (basic) | {dcg_checks['pyright_errors']} "
            f"{dcg_checks['pyright_rules'] or ''} | "
            f"{mcpgen_checks['pyright_errors']} {mcpgen_checks['pyright_rules'] or ''} |",
        ]
        dcg_counts, mcpgen_counts = _pattern_counts(dcg_out), _pattern_counts(mcpgen_dir)
        lines += [
            f"| {name} in the output | {dcg_counts[name]} | {mcpgen_counts[name]} |" for name in dcg_counts
        ]
        mistakes = []
        for stem, row in labels.items():
            none = [None] * len(row)
            for instance, label, theirs, ours in zip(
                cases[stem], row, dcg_verdicts.get(stem, none), mcpgen_verdicts.get(stem, none), strict=True
            ):
                if theirs != label or ours != label:
                    mistakes.append(
                        f"- `{stem}` {json.dumps(instance)[:120]}: jsonschema "
                        f"{'valid' if label else 'invalid'}; datamodel-code-generator "
                        f"{_word(theirs)}; mcpgen {_word(ours)}"
                    )
        lines += ["", "Valid instances a round trip changed (first five per generator):", ""]
        for name, echoes in (("datamodel-code-generator", dcg_echoes), ("mcpgen", mcpgen_echoes)):
            lines += [
                f"- {name}, `{stem}`: {_difference(sent_in, back)}"
                for stem, sent_in, back in changed(echoes)[:5]
            ]
        lines += ["", "Instances judged wrong by either generator:", "", *(mistakes or ["- none"])]
    return "\n".join(lines)


def _difference(sent: Any, back: Any) -> str:
    """The members that differ, as `name: sent -> back` (the whole values when not objects)."""
    if not (isinstance(sent, dict) and isinstance(back, dict)):
        return f"{json.dumps(sent)[:80]} -> {json.dumps(back)[:80]}"
    keys = [
        key
        for key in {**sent, **back}
        if json.dumps(sent.get(key, "<absent>")) != json.dumps(back.get(key, "<absent>"))
    ]
    return "; ".join(
        f"{key}: {json.dumps(sent.get(key, '<absent>'))[:60]} -> {json.dumps(back.get(key, '<absent>'))[:60]}"
        for key in keys[:3]
    )


def _word(verdict: bool | None) -> str:
    return "no verdict" if verdict is None else "accepts" if verdict else "rejects"


@click.command(help="mcpgen's models against datamodel-code-generator's")
@click.option("--tools", type=int, default=1000, help="tools in the synthetic spec (default 1000)")
def command(tools: int) -> None:
    if not DCG_PYTHON.exists():
        print("bench/.venv-dcg is missing: `make bench-deps` installs datamodel-code-generator there")
        return
    print(run(tools))


def main(argv: list[str] | None = None) -> None:
    _cli.run(command, argv)


if __name__ == "__main__":
    main()
