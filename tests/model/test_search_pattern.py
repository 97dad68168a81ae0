"""The name search matches in linear time: a pattern that makes a backtracking engine run for minutes answers
at once, in the API, the MCP server's search_events, the viewer's search and its tables' filter."""

from __future__ import annotations

import re
import time

import pytest
from conftest import X, write_trace

import tracetui
from tui.model.errors import QueryError
from tui.model.pattern import BadPattern, compile_name_pattern

pytest.importorskip("re2")
EVIL = "^(a+)+$"
VICTIM = "a" * 40 + "b"  # Python's re: 2**40 ways to fail; at 30 a's it took over 60 s


@pytest.fixture
def trace(tmp_path):
    names = [VICTIM] * 1000 + ["a" * 40, "aten::mm", "AAAA"]
    return write_trace(tmp_path / "t.json", [X(n, k, 1) for k, n in enumerate(names)])


def test_a_catastrophic_pattern_answers_at_once(trace):
    t = tracetui.load(trace)
    t.events(name="aten", limit=0)  # the parse, the cache and the imports, outside the clock
    began = time.monotonic()
    rows = t.events(name=EVIL, limit=0)
    took = time.monotonic() - began
    assert sorted(r["name"] for r in rows) == ["AAAA", "a" * 40]  # case-insensitive, as before
    assert took < 10.0, f"{took:.2f} s"  # Python's re: 2**40 steps, days (a bound a busy machine never reaches)


def test_python_re_would_not_have(trace):
    """What the bound is for: Python's re on a shorter victim already takes seconds (it grows 2x per a)."""
    began = time.monotonic()
    assert re.compile(EVIL, re.IGNORECASE).search("a" * 24 + "b") is None
    assert time.monotonic() - began > 0.1  # 0.8 s on the 2-core host: room for a CPU or an re 8x faster


def test_the_viewers_search_and_filter_use_the_same_matcher(trace):
    from tui.model.analysis import Analysis
    from tui.model.load import load_trace
    from tui.model.view import navigate

    a = Analysis(load_trace(trace))
    began = time.monotonic()
    found = navigate.search(a, compile_name_pattern(EVIL))
    assert time.monotonic() - began < 1.0
    assert sorted(a.trace.names[a.trace.x.name[i]] for i in found) == ["AAAA", "a" * 40]


def test_what_needs_backtracking_is_refused_in_one_line(trace):
    t = tracetui.load(trace)
    for pattern in ("a(?=b)", r"(a)\1", "(?<!x)mm"):
        with pytest.raises(QueryError) as caught:
            t.events(name=pattern)
        assert "\n" not in str(caught.value) and "linear time" in str(caught.value)
    with pytest.raises(BadPattern, match="unterminated character set"):
        compile_name_pattern("[")  # no regular expression at all: Python's own words
    assert [r["name"] for r in t.events(name=r"\bMM$")] == ["aten::mm"]
