"""Drop tracetui's own Python frames (entry point, tui/, profiler_runner/, runpy) from a with_stack capture.

torch records every frame on the stack when the profiler starts, so the command that ran the capture
heads every stack: `tracetui(8): <module>`, `tui/cli/commands.py(...): main`, `profiler_runner/runner.py(...): capture`.
The frames dropped are those of our files, every frame above them (the entry point, a test runner),
and the profiler's own calls made from them (prof.step(), record_function's enter and exit). The
frames of the user's function, and of the built-in workloads, stay; a kept frame whose parent was
dropped becomes a root. (The table written beside the trace has no frame rows: runner.key_averages.)
"""

from __future__ import annotations

import json
import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

from .usercode import is_ours

_FRAME = re.compile(r"^(?P<file>.+?)\((?P<line>\d+)\): (?P<fn>.+)$")
_PROFILER_FILES = ("torch/profiler/", "torch/autograd/profiler")


@lru_cache(maxsize=4096)
def own_file(shown: str) -> bool:
    """Is this file (as torch shows it: absolute, or relative to an entry of sys.path) one of ours?"""
    if shown in ("runpy.py", "<frozen runpy>") or (shown == Path(sys.argv[0]).name and not shown.endswith(".py")):
        return True  # runpy, or the console script that started us (`tracetui`)
    if Path(shown).is_absolute():
        return is_ours(shown, workloads_too=False)
    for base in ["", *sys.path]:
        candidate = Path(base or ".") / shown
        if candidate.is_file():
            return is_ours(str(candidate), workloads_too=False)
    return False


def own_frame(name: str) -> bool:
    """A frame of ours: in our files, or the zero-argument step a built-in workload is bound into."""
    m = _FRAME.match(name)
    if m is None:
        return False
    if m.group("fn") == "<lambda>" and m.group("file").endswith("profiler_runner/workloads.py"):
        return True
    return own_file(m.group("file"))


def _file(name: str) -> str | None:
    m = _FRAME.match(name)
    return m.group("file") if m else None


def dropped(nodes: dict[Any, tuple[Any, str]]) -> set:
    """The frames to drop, of {key: (parent key or None, frame name)} (parents are frames too)."""
    drop: set = set()
    for key, (_, name) in nodes.items():
        if own_frame(name):
            while key is not None and key not in drop:  # the frame and every frame above it
                drop.add(key)
                key = nodes[key][0] if key in nodes else None
    internal = {
        k
        for k, (parent, name) in nodes.items()
        if k not in drop
        and (parent in drop or parent is None)
        and (name.startswith("<built-in") and parent in drop or (_file(name) or "").startswith(_PROFILER_FILES))
    }
    if not drop:
        return set()
    below: dict = {}
    return drop | {k for k in nodes if _under(k, internal, nodes, below)}


def _under(key, roots: set, nodes: dict, memo: dict) -> bool:
    """Is the frame at or below one of roots? (memo: the answers so far, so a deep stack is walked once)"""
    path: list = []
    while key is not None and key not in memo and len(path) <= len(nodes):
        if key in roots:
            memo[key] = True
            break
        path.append(key)
        key = nodes[key][0] if key in nodes else None
    answer = memo.get(key, False) if key is not None else False
    for k in path:
        memo[k] = answer
    return answer


def clean_trace_file(path: str) -> int:
    """Rewrite a chrome trace without our frames (their kept children re-parented); how many were dropped."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    events = doc.get("traceEvents") or []
    frames = {
        e["args"]["Python id"]: e
        for e in events
        if e.get("cat") == "python_function" and isinstance(e.get("args", {}).get("Python id"), int)
    }
    nodes = {k: (e["args"].get("Python parent id"), str(e.get("name", ""))) for k, e in frames.items()}
    drop = dropped(nodes)
    if not drop:
        return 0
    for k, e in frames.items():
        e["args"]["Python parent id"] = _kept_parent(nodes[k][0], drop, nodes)
    doc["traceEvents"] = [e for e in events if not (e.get("cat") == "python_function" and _id(e) in drop)]
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
    return len(drop)


def _id(e: dict):
    return e.get("args", {}).get("Python id")


def _kept_parent(parent, drop: set, nodes: dict):
    while parent is not None and parent in drop:
        parent = nodes[parent][0] if parent in nodes else None
    return parent
