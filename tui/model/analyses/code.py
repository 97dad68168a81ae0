"""The code view: time per function (forward (mymodel.py:25), and nn.Module rows), GPU time included.

Each row is a Python frame as torch records it with with_stack=True: `mymodel.py(25): forward` is a call
of a function, and 25 is the line of its def, not a line that ran inside it (torch records a frame where
its function starts); the rows name it so, `forward (mymodel.py:25)`. A frame already running when the
profiler started (the script's `<module>`, its `main`, the profiler's own frames) is named by the line it was
running then, a call, not its def: its row says so (running_at_start). A `<module>` frame is a script's
top level (a training loop written at module level lands on one such row). Its device time is every kernel,
memcpy and memset launched from beneath it (through the launch links); CPU total and device total
count a frame once per outermost call (a recursive frame does not count twice). By default frames
of the standard library, torch and other well-known packages are folded into the nearest frame
shown above them, so the rows are your code and the nn.Modules it calls; fold=False shows every frame.
The same frames, merged along their call paths, make the icicle (flame) tree.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from ..analysis import Analysis
from ..cats import BUSY_CATS, Cat, of_cats
from ..sets import distinct
from ..trace import keyed, rank_of_events, ranks_at

FrameKind = Literal["user", "module", "library"]
# Packages whose frames are plumbing for someone profiling a model (folded by default).
LIBRARIES = frozenset(
    {
        "torch",
        "torchvision",
        "torchaudio",
        "torchtext",
        "functorch",
        "triton",
        "numpy",
        "scipy",
        "pandas",
        "transformers",
        "accelerate",
        "diffusers",
        "tokenizers",
        "safetensors",
        "huggingface_hub",
        "datasets",
        "tqdm",
        "typing_extensions",
        "einops",
        "flash_attn",
        "xformers",
        "apex",
        "deepspeed",
        "fairscale",
        "lightning",
        "pytorch_lightning",
        "timm",
        "sentencepiece",
        "jinja2",
        "yaml",
        "packaging",
        "filelock",
        "fsspec",
        "regex",
        "requests",
        "urllib3",
        "pydantic",
        "pkg_resources",
        "setuptools",
        "importlib_metadata",
    }
)
_FRAME = re.compile(r"^(?P<file>.+?)\((?P<line>\d+)\): (?P<function>.*)$")
# torch's own profiler modules (as torch trims their paths): tracing starts inside one of their frames
_PROFILER_CODE = re.compile(r"^torch/(autograd/profiler|profiler/)")
AT_START = "running at start"  # said beside a frame named by the line it ran when the profiler started


def frame_kind(name: str) -> FrameKind:
    """Your code, an nn.Module, or library plumbing (standard library, torch, well-known packages, builtins)."""
    if name.startswith("nn.Module: "):
        return "module"
    if name.startswith("<"):  # <built-in ...>, <frozen os>, <string>(1): <module>
        return "library"
    m = _FRAME.match(name)
    if m is None:
        return "user"  # a frame name not of the file(line): fn form is shown as it is
    path = m["file"]
    if "site-packages/" in path or "dist-packages/" in path or "/lib/python3" in path:
        return "library"
    top = path.lstrip("/").split("/")[0].removesuffix(".py")
    return "library" if top in LIBRARIES or top in sys.stdlib_module_names else "user"


def frame_label(name: str, at_start: bool = False) -> str:
    """How the code view names a frame: a function at its def line, `forward (mymodel.py:25)`; a script's top
    level, `top level (train.py:27)`; nn.Module rows, built-ins and other names as torch writes them. at_start:
    the frame ran when the profiler started, and its line is the one it was running then, `main (prof.py:18,
    running at start)`."""
    m = _FRAME.match(name)
    if m is None:
        return name
    where = f"{m['file']}:{m['line']}" + (f", {AT_START}" if at_start else "")
    return f"top level ({where})" if m["function"] == "<module>" else f"{m['function']} ({where})"


def running_at_start(trace) -> np.ndarray:
    """Per event: a Python frame already running when the profiler started. torch's Python tracer records the
    frames on the stack at its start as calls (PythonTracer's start: recordPyCall(..., is_startup_frame=true)),
    keyed like any call by CodeLocation(frame), whose line is PyFrame_GetLineNumber(frame): the line the frame
    runs now, not its def (torch/csrc/autograd/profiler_python.cpp). On a thread they are its first frames, each
    the parent of the next, down to the profiler's own frame that started tracing: the chain from the thread's
    first frame to the last of torch's profiler frames on it. A thread with no profiler frame there has none
    marked (where its stack at the start ended cannot be told)."""
    x = trace.x
    out = np.zeros(trace.n, bool)
    c_call = np.array([n.startswith("<built-in ") for n in trace.names] or [False])  # a C call: no frame
    frames = np.flatnonzero((x.cat == int(Cat.PYTHON)) & (x.py_id >= 0))
    frames = frames[~c_call[x.name[frames]]]
    if not len(frames):
        return out
    frames = frames[np.lexsort((x.py_id[frames], x.ts[frames], x.track[frames]))]
    _tracks, starts = np.unique(x.track[frames], return_index=True)
    for lo, hi in zip(starts.tolist(), [*starts[1:].tolist(), len(frames)], strict=True):
        k = lo + 1  # the chain: each next frame in start order a child of the one before
        while k < hi and x.py_parent[frames[k]] == x.py_id[frames[k - 1]]:
            k += 1
        chain = frames[lo:k].tolist()
        ours = [j for j, f in enumerate(chain) if _PROFILER_CODE.match(trace.name_of(f))]
        if ours and x.py_parent[chain[0]] < 0:
            out[chain[: ours[-1] + 1]] = True
    return out


@dataclass
class CodeRow:
    """One function (a source frame as torch names it); times in microseconds."""

    frame: str
    kind: FrameKind
    count: int
    self_cpu_us: float
    cpu_total_us: float
    self_device_us: float
    device_total_us: float
    pct_gpu: float
    example: int  # one event of the frame, to show on the timeline
    at_start: bool = False  # running when the profiler started: its line is the one it ran then (a call)

    @property
    def name(self) -> str:  # what the tables filter and jump by
        return self.frame

    @property
    def label(self) -> str:
        """The function at its def line, `forward (mymodel.py:25)` (see frame_label)."""
        return frame_label(self.frame, self.at_start)


@dataclass
class FrameTree:
    """The frames merged along their call paths (the icicle): node k has parent[k] (-1: a root)."""

    parent: list[int] = field(default_factory=list)
    name: list[str] = field(default_factory=list)
    count: list[int] = field(default_factory=list)
    cpu_ns: list[int] = field(default_factory=list)
    device_ns: list[int] = field(default_factory=list)

    def children(self, node: int) -> list[int]:
        return [k for k, p in enumerate(self.parent) if p == node]


@dataclass
class CodeTable:
    rows: list[CodeRow]
    tree: FrameTree
    folded: bool
    from_python_us: float  # device time launched from beneath any Python frame
    gpu_total_us: float  # all GPU activity (kernels, memcpy, memset)
    frames: int  # Python frame events in the trace


def code_table(a: Analysis, fold: bool = True) -> CodeTable:
    """Rows per source frame, hottest device time first (then CPU total), and the icicle tree."""
    x = a.trace.x
    frames = np.flatnonzero(x.cat == int(Cat.PYTHON))
    gpu_total = float(x.dur[of_cats(x.cat, BUSY_CATS)].sum()) / 1000
    if not len(frames):
        return CodeTable([], FrameTree(), fold, 0.0, gpu_total, 0)
    kinds = {n: frame_kind(a.trace.names[n]) for n in distinct(x.name[frames]).tolist()}
    keep = np.array([not fold or kinds[n] != "library" for n in x.name[frames].tolist()])
    shown = frames[keep]
    up = _nearest_shown(a.nesting.parent, shown, a.trace.n)
    top = _nearest_shown(a.nesting.parent, frames, a.trace.n)  # any frame above: for "launched from Python"
    from_python = float(a.gpu_below[frames[top[frames] < 0]].sum()) / 1000
    at_start = {int(n) for n in x.name[frames[running_at_start(a.trace)[frames]]].tolist()}
    rows = _rows(a, shown, up, kinds, gpu_total)
    for r in rows:
        r.at_start = int(x.name[r.example]) in at_start
    return CodeTable(rows, _tree(a, shown, up, at_start), fold, from_python, gpu_total, len(frames))


def _nearest_shown(parent: np.ndarray, shown: np.ndarray, n: int) -> np.ndarray:
    """For every event, the nearest ancestor among `shown` (-1: none), by jumping up until one is hit."""
    is_shown = np.zeros(n, bool)
    is_shown[shown] = True
    up = np.asarray(parent, np.int64).copy()
    live = np.flatnonzero((up >= 0) & ~is_shown[np.maximum(up, 0)])
    while len(live):
        up[live] = parent[up[live]]
        live = live[(up[live] >= 0) & ~is_shown[np.maximum(up[live], 0)]]
    return up


def _rows(a: Analysis, shown: np.ndarray, up: np.ndarray, kinds: dict, gpu_total: float) -> list[CodeRow]:
    x = a.trace.x
    dur, dev = x.dur.astype(np.int64), np.asarray(a.gpu_below, np.int64)
    parent_of = up[shown]
    has = parent_of >= 0
    child_cpu, child_dev = np.zeros(a.trace.n, np.int64), np.zeros(a.trace.n, np.int64)
    np.add.at(child_cpu, parent_of[has], dur[shown[has]])
    np.add.at(child_dev, parent_of[has], dev[shown[has]])
    outer = ~_inside_same(x.name, shown, up)
    names, group = np.unique(x.name[shown], return_inverse=True)

    def total(values: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        w = values if mask is None else np.where(mask, values, 0)
        return np.bincount(group, weights=w, minlength=len(names)) / 1000

    self_cpu, self_dev = total(dur[shown] - child_cpu[shown]), total(dev[shown] - child_dev[shown])
    cpu_total, dev_total = total(dur[shown], outer), total(dev[shown], outer)
    counts = np.bincount(group, minlength=len(names))
    first = np.full(len(names), -1)
    first[group[::-1]] = shown[::-1]
    rows = [
        CodeRow(
            a.trace.names[int(n)],
            kinds[int(n)],
            int(counts[g]),
            float(self_cpu[g]),
            float(cpu_total[g]),
            float(self_dev[g]),
            float(dev_total[g]),
            float(100 * dev_total[g] / gpu_total) if gpu_total else 0.0,
            int(first[g]),
        )
        for g, n in enumerate(names)
    ]
    return sorted(rows, key=lambda r: (-r.device_total_us, -r.cpu_total_us, r.frame))


def _inside_same(name: np.ndarray, shown: np.ndarray, up: np.ndarray) -> np.ndarray:
    """Per shown frame: is it called (at any depth) from a frame of the same name? (recursion)"""
    inside = np.zeros(len(shown), bool)
    cur = up[shown].copy()
    live = cur >= 0
    while live.any():
        inside[live] |= name[cur[live]] == name[shown[live]]
        cur[live] = up[cur[live]]
        live = cur >= 0
    return inside


def _tree(a: Analysis, shown: np.ndarray, up: np.ndarray, at_start: set[int]) -> FrameTree:
    """Merge the shown frames along their call paths, root level first."""
    x = a.trace.x
    depth = np.zeros(a.trace.n, np.int64)
    cur = up[shown].copy()
    live = cur >= 0
    while live.any():
        depth[shown[live]] += 1
        cur[live] = up[cur[live]]
        live = cur >= 0
    node = np.full(a.trace.n, -1, np.int64)
    tree = FrameTree()
    for d in range(int(depth[shown].max()) + 1):
        level = shown[depth[shown] == d]
        parent_node = np.where(up[level] >= 0, node[np.maximum(up[level], 0)], -1)
        keys, inverse = np.unique(np.stack([parent_node, x.name[level].astype(np.int64)]), axis=1, return_inverse=True)
        inverse = inverse.ravel()
        node[level] = len(tree.parent) + inverse
        m = keys.shape[1]
        tree.parent += keys[0].tolist()
        tree.name += [frame_label(a.trace.names[k], k in at_start) for k in keys[1].tolist()]
        tree.count += np.bincount(inverse, minlength=m).tolist()
        tree.cpu_ns += np.bincount(inverse, weights=x.dur[level], minlength=m).astype(np.int64).tolist()
        gpu = np.asarray(a.gpu_below)[level]
        tree.device_ns += np.bincount(inverse, weights=gpu, minlength=m).astype(np.int64).tolist()
    return tree


def python_levels(trace) -> int:
    """The deepest chain of Python frames, by their own Python ids (no nesting needed)."""
    from ..nesting import depth_of

    x = trace.x
    frames = np.flatnonzero((x.cat == int(Cat.PYTHON)) & (x.py_id >= 0))
    if not len(frames):
        return int((x.cat == int(Cat.PYTHON)).any())
    rank = ranks_at(rank_of_events(trace), frames)
    ids = keyed(rank, x.py_id[frames])
    order = np.argsort(ids, kind="stable")
    wanted = keyed(rank, x.py_parent[frames])
    pos = np.clip(np.searchsorted(ids[order], wanted), 0, len(frames) - 1)
    found = (wanted >= 0) & (ids[order][pos] == wanted)
    parent = np.where(found, order[pos], -1)
    return int(depth_of(parent).max()) + 1
