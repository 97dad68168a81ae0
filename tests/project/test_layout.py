"""The code stays in parts a reader can hold: no class over MAX_CLASS_LINES lines in tui, tracetui or profiler_runner
(the timeline and the main screen are split into mixins, each part one concern)."""

from __future__ import annotations

import ast

from conftest import ROOT

MAX_CLASS_LINES = 400
PACKAGES = ("tui", "tracetui", "profiler_runner")


def class_lengths() -> dict[str, int]:
    """'path:Class' -> its lines, decorators to its last line, for every class (nested ones too)."""
    out = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.ClassDef):
                    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                    out[f"{path.relative_to(ROOT)}:{node.name}"] = (node.end_lineno or node.lineno) - first + 1
    return out


def test_no_class_is_over_400_lines():
    lengths = class_lengths()
    assert "tui/widgets/timeline.py:Timeline" in lengths and len(lengths) > 100  # the walk saw the package
    assert {k: n for k, n in lengths.items() if n > MAX_CLASS_LINES} == {}
