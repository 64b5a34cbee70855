"""Issue 31 item 1: the linear matcher (uri_spans.py) splits every URI exactly as the backtracking
regex it replaced (regex_uri_match.py, kept here as the reference), over generated templates of every
RFC 6570 kind and URIs short enough for the reference to answer: random strings over the characters
the kinds stop at, and expansions of the template. Ambiguous URIs included: `{a}{b}` on `xy` gives
a="xy", b=""; `{+a}{b}` gives a="", b="xy" (uri_spans.py)."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpgen_runtime.server.core.resources.uri_match import UriPattern
from mcpgen_runtime.server.core.resources.uri_spans import spans
from mcpgen_runtime.uri_template import expand
from tests.runtime.server.core.regex_uri_match import RegexUriPattern

OPERATORS = ["", "", "+", "#", ".", "/", ";", "?", "&"]
# Characters every kind stops at or joins with, literal characters, a non-ASCII one and an astral one.
ALPHABET = "/?#,&.;=-ab%2Fé😀\\"
LITERALS = ["", "", "-", ".", "/", ",", "x", "-a", "é", "?", "#", "&", ";", "=", "%2F"]


@st.composite
def templates(draw: st.DrawFn) -> str:
    out = [draw(st.sampled_from(["x://", "x:", ""]))]
    names = iter(f"v{i}" for i in range(100))
    for _ in range(draw(st.integers(1, 4))):
        operator = draw(st.sampled_from(OPERATORS))
        specs = []
        for _ in range(draw(st.integers(1, 3))):
            modifier = draw(st.sampled_from(["", "", "*", ":2"]))
            specs.append(next(names) + modifier)
        out.append("{" + operator + ",".join(specs) + "}")
        out.append(draw(st.sampled_from(LITERALS)))
    return "".join(out)


def _uri_for(template: str, draw: st.DrawFn) -> str:
    how = draw(st.sampled_from(["random", "skeleton", "expanded", "expanded"]))
    if how == "random":
        return template.split("{", 1)[0] + draw(st.text(ALPHABET, max_size=14))
    if how == "skeleton":  # the template's literals kept, each expression replaced by random text
        pieces = re.split(r"\{[^}]*\}", template)
        alphabet = draw(st.sampled_from([ALPHABET, "ab-é,.", "a-"]))
        fillers = [draw(st.text(alphabet, max_size=4)) for _ in pieces[1:]]
        return pieces[0] + "".join(f + p for f, p in zip(fillers, pieces[1:], strict=True))
    values: dict[str, object] = {}
    for name in (f"v{i}" for i in range(12)):
        kind = draw(st.sampled_from(["none", "text", "text", "text", "list", "map"]))
        text = st.text(ALPHABET, max_size=3)
        if kind == "text":
            values[name] = draw(text)
        elif kind == "list":
            values[name] = draw(st.lists(text, min_size=1, max_size=2))
        elif kind == "map":
            values[name] = draw(st.dictionaries(st.text("ab", min_size=1, max_size=2), text, max_size=2))
    uri = expand(template, values)
    if len(uri) > 28:  # the reference is exponential: keep it short, and still matching most of the time
        values = {name: value for name, value in values.items() if isinstance(value, str)}
        uri = expand(template, {name: value[:1] for name, value in values.items()})
    if draw(st.integers(0, 3)) == 0:  # one character changed: near misses
        at = draw(st.integers(len(template.split("{", 1)[0]), len(uri)))
        uri = uri[:at] + draw(st.sampled_from(ALPHABET)) + uri[at + 1 :]
    return uri[:32]


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, str]:
    template = draw(templates())
    return template, _uri_for(template, draw)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_the_linear_matcher_answers_as_the_regex_did(case: tuple[str, str]) -> None:
    template, uri = case
    reference = RegexUriPattern(template)
    pattern = UriPattern(template, raw_values=True)
    assert spans(pattern._pieces, uri) == reference.spans(uri), (template, uri)
    assert pattern.match(uri) == reference.match(uri), (template, uri)


def test_adjacent_variables_split_as_documented() -> None:
    for template, uri, variables in (
        ("x://{a}{b}", "x://xy", {"a": "xy", "b": ""}),
        ("x://{+a}{b}", "x://xy", {"a": "", "b": "xy"}),
        ("x://{a}{+b}", "x://xy", {"a": "xy", "b": ""}),
        ("team://{org}-{team}-{member}", "team://a-b-c-d", {"org": "a-b", "team": "c", "member": "d"}),
        ("x://{+a}/{+b}", "x://a/b/c", {"a": "a", "b": "b/c"}),
        ("x://{a}{/b*}", "x://a/b/c", {"a": "a", "b": ["b", "c"]}),
        ("x://{a}{.b}", "x://a.b", {"a": "a.b"}),
    ):
        assert UriPattern(template).match(uri) == RegexUriPattern(template).match(uri) == variables
