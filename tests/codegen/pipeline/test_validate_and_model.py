"""Validation and modelling side by side (pipeline.validate_and_model): the result is what
`validate` returns, an invalid spec raises what it raises, and the IR built meanwhile is used only
when validation let every tool through unchanged."""

from __future__ import annotations

import copy
import json
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codegen import parallel, pipeline
from codegen.errors import SpecValidationError
from codegen.load.document import load_file
from codegen.model.build import Stopped
from codegen.spec import LoadedSpec
from codegen.validate.checks import validate
from tests.support import ROOT

pytestmark = pytest.mark.skipif(not parallel.can_fork(), reason="models beside validation only with a fork")


@pytest.fixture(autouse=True)
def _every_spec_is_large(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(pipeline, "_MODEL_BESIDE_TOOLS", 1)
    pipeline._IR_CACHE.clear()
    yield
    pipeline._IR_CACHE.clear()


def _models_built(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many tools each later build_ir call modelled (in this process)."""
    calls: list[int] = []
    real = pipeline.build_ir

    def counting(spec: Any, *, package: str, stop: Any = None) -> Any:
        calls.append(len(spec.tools))
        return real(spec, package=package, stop=stop)

    monkeypatch.setattr(pipeline, "build_ir", counting)
    return calls


def _spec(tmp_path: Path, tools: list[dict[str, Any]]) -> LoadedSpec:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps({"tools": tools}), "utf-8")
    return load_file(path)


def _weather() -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = json.loads((ROOT / "specs" / "weather.json").read_text("utf-8"))["tools"]
    return tools


def test_a_valid_spec_is_validated_and_its_model_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded = _spec(tmp_path, _weather())
    expected = validate(loaded)
    calls = _models_built(monkeypatch)
    validated = pipeline.validate_and_model(loaded, strict=False)
    assert validated == expected
    assert calls == [len(loaded.tools)]  # here, beside validation
    beside = pipeline.build_client(validated, package="weather_client")
    assert calls == [len(loaded.tools)]  # no second model
    pipeline._IR_CACHE.clear()
    assert pipeline.build_client(expected, package="weather_client") == beside


def test_an_invalid_spec_raises_what_validate_raises(tmp_path: Path) -> None:
    tools = _weather()
    tools[0]["inputSchema"] = {"type": "object", "properties": {"x": {"type": "nonsense"}}}
    loaded = _spec(tmp_path, tools)
    with pytest.raises(SpecValidationError) as expected:
        validate(loaded)
    with pytest.raises(SpecValidationError) as raised:
        pipeline.validate_and_model(loaded, strict=False)
    assert raised.value.diagnostics == expected.value.diagnostics


def test_a_skipped_tool_is_not_in_the_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tools = _weather()
    broken = copy.deepcopy(tools[0])
    broken["name"] = "broken"
    broken["inputSchema"] = {"type": "object", "properties": {"x": {"$ref": "#/$defs/missing"}}}
    loaded = _spec(tmp_path, [*tools, broken])
    calls = _models_built(monkeypatch)
    validated = pipeline.validate_and_model(loaded, strict=False, skip_invalid=True)
    assert validated == validate(loaded, skip_invalid=True)
    assert [tool["name"] for tool in validated.tools] == [tool["name"] for tool in tools]
    package = pipeline.build_client(validated, package="weather_client")
    assert calls[-1] == len(tools)  # modelled again, from the validated tools
    assert b'"broken"' not in package.files["tools.json"]


def test_input_the_model_cannot_read_is_validations_to_report(tmp_path: Path) -> None:
    loaded = _spec(tmp_path, [*_weather(), {"name": 42, "inputSchema": []}])
    with pytest.raises(SpecValidationError, match=r"MCPGEN-TOOL-SHAPE|TOOLS-07"):
        pipeline.validate_and_model(loaded, strict=False)


def test_without_a_fork_the_result_is_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = _spec(tmp_path, _weather())
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        calls = _models_built(monkeypatch)
        validated = pipeline.validate_and_model(loaded, strict=False)
    finally:
        stop.set()
        thread.join()
    assert validated == validate(loaded)
    assert calls == []  # validated first; the builds model it


def test_modelling_stops_once_validation_rejects_the_spec(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Validation of 600 tools ends well before modelling them does: the model is abandoned then
    (model.build.Stopped), not finished for nothing."""
    sys.path.insert(0, str(ROOT / "specs" / "tools"))
    try:
        from make_synthetic import make_tools
    finally:
        sys.path.pop(0)
    tools = make_tools(600)
    tools[0]["inputSchema"] = {"type": "object", "properties": {"x": {"type": "nonsense"}}}
    loaded = _spec(tmp_path, tools)
    outcomes: list[str] = []
    real = pipeline.build_ir

    def recording(spec: Any, *, package: str, stop: Any = None) -> Any:
        try:
            ir = real(spec, package=package, stop=stop)
        except Stopped:
            outcomes.append("stopped")
            raise
        outcomes.append("finished")
        return ir

    monkeypatch.setattr(pipeline, "build_ir", recording)
    with pytest.raises(SpecValidationError, match="nonsense"):
        pipeline.validate_and_model(loaded, strict=False)
    assert outcomes == ["stopped"]
