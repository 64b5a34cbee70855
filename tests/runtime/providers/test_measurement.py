"""bench/provider_profiles.py: the table of docs/explanation/provider-profiles.md, per corpus and in all."""

from __future__ import annotations

from bench.provider_profiles import BEGIN, END, PAGE, table


def test_the_table_counts_each_profile_per_corpus_and_in_all() -> None:
    closed = {"type": "object", "properties": {}, "required": [], "additionalProperties": False}
    tools = [
        {"name": "a", "inputSchema": closed},
        {
            "name": "b",
            "inputSchema": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}},
        },
    ]
    lines = table([("one", tools), ("two", tools[:1])]).splitlines()
    assert lines[2] == "| one | 2 | 1 / 1 / 0 | 1 / 0 / 1 | 2 / 0 / 0 |"
    assert lines[3] == "| two | 1 | 1 / 0 / 0 | 1 / 0 / 0 | 1 / 0 / 0 |"
    assert lines[4] == "| **all** | **3** | **2 / 1 / 0** | **2 / 0 / 1** | **3 / 0 / 0** |"


def test_the_page_holds_a_table_between_its_markers() -> None:
    page = PAGE.read_text(encoding="utf-8")
    between = page.split(BEGIN, 1)[1].split(END, 1)[0]
    assert "| **all** |" in between
