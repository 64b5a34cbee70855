"""Runs inside bench/.venv-dcg (datamodel-code-generator, pinned in bench/requirements-dcg.txt); never
imported by mcpgen. Driven by bench/dcg_compare.py:

    python bench/_dcg_worker.py generate IN_DIR OUT_DIR   each IN_DIR/*.json schema -> OUT_DIR/<stem>.py
                                                          with the generator's defaults; a JSON report
                                                          on stdout
    python bench/_dcg_worker.py judge OUT_DIR CASES.json  each case's instances through the root model of
                                                          OUT_DIR/<stem>.py; accepted flags on stdout
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import sys
import time
import traceback
from pathlib import Path


def generate(in_dir: Path, out_dir: Path) -> None:
    from datamodel_code_generator import InputFileType
    from datamodel_code_generator import generate as dcg_generate

    out_dir.mkdir(parents=True, exist_ok=True)
    report = {}
    for path in sorted(in_dir.glob("*.json")):
        started = time.perf_counter()
        try:
            dcg_generate(
                path.read_text("utf-8"),
                input_file_type=InputFileType.JsonSchema,
                output=out_dir / f"{path.stem}.py",
            )
            report[path.stem] = {"ok": True, "seconds": time.perf_counter() - started}
        except BaseException as exc:  # a crash is a result here
            if isinstance(exc, KeyboardInterrupt):
                raise
            last = traceback.format_exception_only(type(exc), exc)[-1].strip()
            report[path.stem] = {"ok": False, "seconds": time.perf_counter() - started, "error": last[:300]}
    json.dump(report, sys.stdout)


def _root_model(module: object) -> type:
    from pydantic import BaseModel

    classes = [
        value
        for _, value in inspect.getmembers(module, inspect.isclass)
        if issubclass(value, BaseModel) and value.__module__ == module.__name__
    ]  # type: ignore[attr-defined]
    named = [cls for cls in classes if cls.__name__ == "Model"]
    if named:
        return named[0]
    # otherwise the class defined last in the file (the root comes after what it uses)
    return max(classes, key=lambda cls: inspect.getsourcelines(cls)[1])


def judge(out_dir: Path, cases_path: Path) -> None:
    from pydantic import ValidationError

    cases = json.loads(cases_path.read_text("utf-8"))
    verdicts: dict[str, list[bool | None]] = {}
    echoes: dict[str, list[object]] = {}
    for stem, instances in cases.items():
        spec = importlib.util.spec_from_file_location(f"dcg_{stem}", out_dir / f"{stem}.py")
        try:
            module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
            sys.modules[spec.name] = module  # type: ignore[union-attr]
            spec.loader.exec_module(module)  # type: ignore[union-attr]
            model = _root_model(module)
            model.model_rebuild() if hasattr(model, "model_rebuild") else None
        except Exception:
            verdicts[stem] = [None] * len(instances)  # the module does not import: no verdict
            echoes[stem] = [None] * len(instances)
            continue
        row: list[bool | None] = []
        same: list[object] = []  # True, or what came back when it differs
        for instance in instances:
            try:
                parsed = (model.model_validate if hasattr(model, "model_validate") else model.parse_obj)(
                    instance
                )
                row.append(True)
                try:  # what a client would send back for it
                    dumped = parsed.model_dump(mode="json", by_alias=True, exclude_unset=True)
                    same.append(
                        True
                        if json.dumps(dumped, sort_keys=True) == json.dumps(instance, sort_keys=True)
                        else {"sent": dumped}
                    )  # as JSON text: 2 and 2.0 differ on the wire
                except Exception:
                    same.append(None)
            except ValidationError:
                row.append(False)
                same.append(None)
            except Exception:
                row.append(None)
                same.append(None)
        verdicts[stem] = row
        echoes[stem] = same
    json.dump({"verdicts": verdicts, "echoes": echoes}, sys.stdout)


if __name__ == "__main__":
    command, *rest = sys.argv[1:]
    if command == "generate":
        generate(Path(rest[0]), Path(rest[1]))
    else:
        judge(Path(rest[0]), Path(rest[1]))
