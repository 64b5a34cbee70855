"""JSON Schema patterns are ECMA-262 regular expressions: the runtime's translation against Node.

Differential: every pattern of tests/runtime/ecma_patterns.json (the JSON Schema Test Suite's
pattern cases, our own per construct, and the real tool lists' patterns when ../shared is present)
gets the same valid/invalid verdict from `mcpgen_runtime.patterns.ecma_regex` as from Node 22's
`new RegExp(pattern, "u")`, and every valid, enforced pattern the same `search` result on each of
its sample strings. The patterns the runtime cannot enforce faithfully are exactly the ones the
corpus marks `"enforced": false`.
"""

from __future__ import annotations

import pytest

from mcpgen_runtime.patterns.ecma_regex import EcmaSyntaxError, translate
from mcpgen_runtime.schema import SchemaCompileError, compile_schema
from tests.runtime.ecma_reference import corpus, realworld_patterns, reference


def test_corpus_is_large_and_covers_both_verdicts() -> None:
    cases = corpus()
    assert len({c.pattern for c in cases}) >= 200
    assert any(c.source.startswith("JSON-Schema-Test-Suite") for c in cases)
    _, verdicts = reference()
    assert sum(v.valid for v in verdicts.values()) >= 150
    assert sum(not v.valid for v in verdicts.values()) >= 50


def test_same_verdicts_and_matches_as_node() -> None:
    engine, verdicts = reference()
    disagreements: list[str] = []
    unenforced: list[str] = []
    for case, verdict in verdicts.items():
        try:
            translated = translate(case.pattern)
        except EcmaSyntaxError as exc:
            if verdict.valid:
                disagreements.append(f"{case.pattern!r}: {engine} accepts it, the runtime says {exc}")
            continue
        if not verdict.valid:
            disagreements.append(
                f"{case.pattern!r}: {engine} rejects it ({verdict.error}), the runtime accepts it"
            )
            continue
        if translated.search is None:
            unenforced.append(case.pattern)
            if case.enforced:
                disagreements.append(f"{case.pattern!r}: not enforced ({translated.reason})")
            continue
        if not case.enforced:
            disagreements.append(f"{case.pattern!r}: the corpus expects it unenforced, but it is enforced")
        for sample, expected in zip(case.samples, verdict.matches, strict=True):
            got = translated.search(sample)
            if got != expected:
                disagreements.append(
                    f"{case.pattern!r} on {sample!r}: {engine} says {expected}, the runtime {got}"
                    f" (translated to {translated.python!r})"
                )
    assert disagreements == []


def test_realworld_patterns_all_valid() -> None:
    """Skipped parts: ../shared/realworld may hold no patterns; the corpus test covers them when it does."""
    _, verdicts = reference()
    for case, verdict in verdicts.items():
        if case.source == "../shared/realworld":
            assert verdict.valid, case.pattern
    assert isinstance(realworld_patterns(), list)


@pytest.mark.parametrize(
    ("pattern", "valid", "invalid"),
    [
        (r"^(?<year>\d{4})$", "2024", "٢٠٢٤"),
        (r"^\p{Lu}", "Éa", "éa"),
        (r"^\p{Script=Greek}+$", "αβγ", "abc"),
        (r"(?<=\$)\d+$", "$5", "5"),
        (r"^abc$", "abc", "abc\n"),
        (r"^a.c$", "abc", "a\u2028c"),
        (r"^🐲$", "🐲", "🐲🐲"),
    ],
)
def test_compiled_schemas_enforce_ecma_semantics(pattern: str, valid: str, invalid: str) -> None:
    """`compile_schema` (both the fast path and jsonschema) and `patternProperties` use the translation."""
    for schema in (
        {"type": "string", "pattern": pattern},
        {"type": "string", "pattern": pattern, "dependentSchemas": {}},  # not on the fast path
    ):
        validate = compile_schema(schema)
        assert validate(valid) is None
        issue = validate(invalid)
        assert issue is not None and issue.pointer == ""
    props = compile_schema({"type": "object", "patternProperties": {pattern: {"type": "integer"}}})
    assert props({valid: 1, invalid: "not checked"}) is None
    issue = props({valid: "x"})
    assert issue is not None and issue.pointer == "/" + valid.replace("~", "~0").replace("/", "~1")


def test_invalid_ecma_pattern_is_a_compile_error() -> None:
    with pytest.raises(SchemaCompileError, match="pattern"):
        compile_schema({"type": "string", "pattern": "(?P<x>a)"})
    with pytest.raises(SchemaCompileError):
        compile_schema({"type": "object", "patternProperties": {r"\p{Foo}": {}}})


def test_unenforceable_pattern_is_skipped_not_refused() -> None:
    pattern = r"(?:(a)|b)+\1"
    translated = translate(pattern)
    assert translated.search is None and translated.reason and "backreference" in translated.reason
    validate = compile_schema({"type": "string", "pattern": pattern})
    assert validate("zzz") is None  # not enforced: every string passes


def test_the_mock_draws_values_for_ecma_only_patterns() -> None:
    """hypothesis draws with Python's `re`: the mock hands it the translation, and checks the original."""
    pytest.importorskip(
        "hypothesis_jsonschema", reason="the mock's value generator needs mcpgen-runtime[mock]"
    )
    from mcpgen_runtime.mock.values import ValueMaker

    pattern = r"^(?<year>\d{4})-(?<month>\d{2})$"
    maker = ValueMaker({"type": "string", "pattern": pattern})
    search = translate(pattern).search
    assert search is not None
    values = [maker.make(seed) for seed in range(5)]
    assert all(isinstance(v, str) and search(v) and v[:4].isascii() for v in values)
    letters = ValueMaker({"type": "string", "pattern": r"^\p{Lu}[\p{L}\p{N}]{2}$"})
    upper = translate(r"^\p{Lu}[\p{L}\p{N}]{2}$").search
    assert upper is not None and all(upper(letters.make(seed)) for seed in range(5))


def test_expanded_properties_match_as_the_regex_engine_does() -> None:
    """`expand_properties` (what the mock hands hypothesis) against the translation it came from."""
    import re

    from mcpgen_runtime.patterns.ecma_regex import expand_properties

    compared = 0
    for case in corpus():
        try:
            translated = translate(case.pattern)
        except EcmaSyntaxError:
            continue
        if translated.search is None or not translated.needs_regex or translated.python is None:
            continue
        try:
            plain = re.compile(expand_properties(translated.python))
        except re.error:
            continue  # variable-width lookbehind: only `regex` runs it
        for sample in case.samples:
            assert (plain.search(sample) is not None) == translated.search(sample), (case.pattern, sample)
            compared += 1
    assert compared > 1000


def test_unevaluated_properties_matches_the_json_schema_test_suite() -> None:
    """`unevaluatedProperties` is ours (jsonschema's matches patternProperties with Python's `re`):
    differential against the JSON Schema Test Suite's 2020-12 cases and jsonschema itself."""
    import json
    from pathlib import Path

    from jsonschema import Draft202012Validator

    groups = json.loads((Path(__file__).parent / "unevaluated_properties_suite.json").read_text())["groups"]
    checked = 0
    for group in groups:
        try:
            validate = compile_schema(group["schema"])
        except SchemaCompileError:
            continue  # remote $refs: never fetched (SCHEMA-08)
        reference = Draft202012Validator(group["schema"])
        for case in group["tests"]:
            ours = validate(case["data"]) is None
            assert ours == case["valid"] == reference.is_valid(case["data"]), (group["description"], case)
            checked += 1
    assert checked >= 100
    validate = compile_schema(
        {"type": "object", "patternProperties": {r"^(?<a>x)$": {}}, "unevaluatedProperties": False}
    )
    assert validate({"x": 1}) is None
    assert validate({"y": 1}) is not None
    digits = compile_schema(
        {"type": "object", "patternProperties": {r"^\d$": {}}, "unevaluatedProperties": False}
    )
    assert digits({"3": 1}) is None and digits({"٣": 1}) is not None  # ECMA's \d is ASCII


def test_hostile_patterns_are_bounded() -> None:
    """Nesting past MAX_NESTING is not enforced (no RecursionError); long patterns parse in linear time."""
    deep = translate("(" * 101 + "a" + ")" * 101)
    assert deep.search is None and deep.reason is not None and "nested" in deep.reason
    assert translate("(" * 100 + "a" + ")" * 100).search is not None
    with pytest.raises(EcmaSyntaxError, match="position 0"):
        translate("{" + "a{1}" * 50_000)
    long = translate("[a-z]{1,2}" * 20_000)
    assert long.search is not None and long.search("ab" * 20_000)


def test_both_engines_are_exercised_by_the_differential_corpus() -> None:
    """MCPGEN-REGEX-BUDGET: the Node comparison above runs RE2 (regular patterns) and `regex` (the
    rest) alike; a lone surrogate, which RE2 cannot take, goes to `regex` with the same answer."""
    engines: dict[str | None, int] = {}
    for case in corpus():
        try:
            engine = translate(case.pattern).engine
        except EcmaSyntaxError:
            continue
        engines[engine] = engines.get(engine, 0) + 1
    assert engines.get("re2", 0) >= 100 and engines.get("regex", 0) >= 50, engines
    search = translate("^[\ud800-\udbff]x$").search
    assert translate("^[\ud800-\udbff]x$").engine == "re2" and search is not None
    assert search("\ud800x") and not search("\ud800y")
