"""The Args section of a generated method's docstring (codegen/render/package.py)."""

from __future__ import annotations

from codegen.model.ir import ParamIR, Prim
from codegen.render.package import _args_section


def param(name: str, description: str | None, default: int | None = None) -> ParamIR:
    return ParamIR(
        name=name,
        field_name=name,
        wire_name=name,
        type=Prim("int"),
        required=False,
        has_default=default is not None,
        default=default,
        description=description,
    )


def test_a_default_follows_the_description_as_a_sentence_of_its_own() -> None:
    section = _args_section(
        [
            param("duration", "Duration of the operation in seconds", 10),  # server-everything's
            param("steps", "Number of steps.", 5),
            param("n", None, 3),
            param("plain", "No default here"),
        ]
    )
    assert "duration: Duration of the operation in seconds. Defaults to 10 when omitted." in section
    assert "steps: Number of steps. Defaults to 5 when omitted." in section
    assert "n: Defaults to 3 when omitted." in section
    assert "plain: No default here\n" in section + "\n"
