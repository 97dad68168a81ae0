"""The model imports neither Textual nor torch; the CLI starts without torch."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    ("code", "banned"),
    [
        ("import tui.model.analyses.results, tui.model.view.navigate, tui.model.load", ("textual", "torch", "rich")),
        ("import tui.cli, tui.reports; tui.cli.build_parser()", ("torch", "textual")),
        ("import profiler_runner.registry, profiler_runner.cli_args", ("torch",)),
    ],
)
def test_modules_do_not_pull_heavy_imports(code, banned):
    probe = f"{code}\nimport sys\nprint(','.join(m for m in {banned!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""


def test_one_front_door_opens_traces():
    """The CLI, the app, the API and the MCP server open traces through tui.model.loading.open_trace only: no
    caller outside the model reaches past it to the loader or the graph-capture credit."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    back_doors = {"load_trace", "load_credited"}
    found = []
    for path in [*(root / "tui").rglob("*.py"), *(root / "tracetui").rglob("*.py")]:
        if (root / "tui" / "model") in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and any(a.name in back_doors for a in node.names):
                found.append(f"{path.relative_to(root)}:{node.lineno}")
    assert found == []
    opened = [
        p
        for p in ("tui/cli/options.py", "tui/app/__init__.py", "tracetui/_trace.py")
        if "open_trace" in (root / p).read_text()
    ]
    assert opened == ["tui/cli/options.py", "tui/app/__init__.py", "tracetui/_trace.py"]


def test_distinct_values_come_from_one_sort_not_np_unique():
    """Distinct values are tui.model.sets.distinct's (one sort): np.unique without return_* fills a hash set since
    NumPy 2.3, 4-50x slower on the columns (RESULTS.md, round 17); so do np.union1d and friends without
    assume_unique. Where np.unique is still called, it is with a return_* keyword (the sort path) or in sets.py."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    hashed = {"unique", "union1d", "intersect1d", "setdiff1d", "setxor1d"}
    found = []
    for path in (root / "tui").rglob("*.py"):
        if path == root / "tui" / "model" / "sets.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in hashed):
                continue
            if not (isinstance(node.func.value, ast.Name) and node.func.value.id == "np"):
                continue
            keys = {k.arg for k in node.keywords}
            if not (keys & {"return_index", "return_inverse", "return_counts", "assume_unique"}):
                found.append(f"{path.relative_to(root)}:{node.lineno} np.{node.func.attr}")
    assert found == []
