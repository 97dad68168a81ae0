"""Which frame of a stack names an allocation: the innermost frame of your Python code, C++ folded.

A snapshot's stack holds the C++ frames (from the allocator up through the dispatcher) then the Python
frames, innermost first. The name of an allocation is its innermost Python frame that is your code (the
code view's rule: the standard library, torch and well-known packages are library, analyses/code.py);
a stack of library frames only is named by its innermost Python frame. A stack with no Python frame at
all (the autograd engine's thread runs the backward in C++) is named by what the C++ frames say: the
autograd node (`MeanBackward0 (backward)`), else the outermost aten op (`aten::mm`), else its innermost
frame that is not the allocator's, the unwinder's or the dispatcher's plumbing.

Python frames are named as the code view names them, but at the line that was running (a snapshot
records it, where the profiler records a function's def line): `forward (model.py:123)`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from ..analyses.code import frame_kind
from .columns import NO_STACK, Stacks

FrameKind = Literal["user", "library", "c++", "none"]
BEFORE_HISTORY = "(allocated before the history)"
NO_FRAMES = "(no frames recorded)"
_AUTOGRAD = re.compile(r"torch::autograd::generated::([A-Za-z0-9]*Backward\d*)(?:_apply_functional)?(?:::\w+)?\(")
_ATEN = re.compile(r"at::_ops::(\w+)::(?:call|redispatch)\(")
# memory_viz's frameFilter: the unwinder and the interpreter's own frames say nothing about your code.
OMIT_FUNCTIONS: tuple[str, ...] = (
    "unwind::unwind",
    "CapturedTraceback::gather",
    "gather_with_cpp",
    "_start",
    "__libc_start_main",
)
OMIT_FUNCTIONS += ("PyEval_", "PyObject_", "PyFunction_")
OMIT_FILES: tuple[str, ...] = (
    "core/boxing",
    "/Register",
    "/Redispatch",
    "pythonrun.c",
    "Modules/main.c",
    "Objects/call.c",
)
OMIT_FILES += ("Objects/methodobject.c", "pycore_ceval.h", "ceval.c", "cpython/abstract.h")
PLUMBING: tuple[str, ...] = (
    "CachingAllocator",
    "c10::impl::",
    "at::detail::empty",
    "c10::Dispatcher",
    "wrap_kernel_functor",
)
PLUMBING += ("torch::unwind", "CapturedTraceback", "gather_with_cpp", "at::_ops::", "at::(anonymous namespace)::")
PLUMBING += ("at::TensorIteratorBase", "at::empty", "std::", "pthread", "__clone", "torch::autograd::Engine")
PLUMBING += ("torch::autograd::Node::operator", "torch::autograd::python::PythonEngine", "c10::intrusive_ptr")
PLUMBING += ("TensorImpl", "c10::StorageImpl", "at::Tensor::~", "at::TensorBase::~")


def is_python(filename: str) -> bool:
    return filename.endswith(".py") or filename.startswith("<")


def shown(name: str, filename: str) -> bool:
    """A frame memory_viz would show (not the unwinder's, the interpreter's or the dispatcher's boxing)."""
    return not any(o in name for o in OMIT_FUNCTIONS) and not any(o in filename for o in OMIT_FILES)


def python_label(name: str, filename: str, line: int | None) -> str:
    """`forward (model.py:123)`; a script's top level `top level (train.py:27)`; line None: `forward (model.py)`."""
    where = filename if line is None else f"{filename}:{line}"
    return f"top level ({where})" if name == "<module>" else f"{name} ({where})"


def kind_of(name: str, filename: str, line: int) -> FrameKind:
    """user or library (Python frames, as the code view decides), or c++."""
    if not is_python(filename):
        return "c++"
    return "user" if frame_kind(f"{filename}({line}): {name}") == "user" else "library"


def cpp_label(names: list[str]) -> str:
    """What a stack of C++ frames only allocated for: the autograd node, else the outermost aten op, else its
    innermost frame that is not plumbing (names innermost first)."""
    for n in names:
        m = _AUTOGRAD.search(n)
        if m:
            return f"{m.group(1)} (backward)"
    ops = [m.group(1) for n in names if (m := _ATEN.search(n))]
    if ops:
        op, _, overload = ops[-1].rpartition("_")
        return f"aten::{op}.{overload}" if op and overload[:1].isupper() else f"aten::{ops[-1]}"
    for n in names:
        if not any(p in n for p in PLUMBING):
            return n.split("(", 1)[0]
    if any("torch::autograd::Engine" in n for n in names):
        return "the autograd engine (backward)"
    return names[0].split("(", 1)[0] if names else NO_FRAMES


def _op_of(names: list[str]) -> str:
    """The aten op (outermost) or the autograd node of C++ frames, "" when they name neither."""
    if not any(_AUTOGRAD.search(n) or _ATEN.search(n) for n in names):
        return ""
    label = cpp_label(names)
    if label.endswith("(backward)"):  # the node, and the op inside it that allocated
        ops = [m.group(1) for n in names if (m := _ATEN.search(n))]
        return cpp_label([f"at::_ops::{ops[0]}::call("]) if ops else label
    return label


@dataclass
class Namer:
    """Names the stacks of one snapshot (each stack named once, then remembered)."""

    stacks: Stacks
    lines_too: bool = True  # name Python frames at their line (False: by function, as a diff of two runs does)
    _labels: dict[int, tuple[str, FrameKind]] = field(default_factory=dict)
    _kinds: dict[int, FrameKind] = field(default_factory=dict)
    _ops: dict[int, str] = field(default_factory=dict)

    def frame_kind(self, fid: int) -> FrameKind:
        kind = self._kinds.get(fid)
        if kind is None:
            s = self.stacks
            kind = self._kinds[fid] = kind_of(s.names[fid], s.files[fid], s.lines[fid])
        return kind

    def label(self, stack: int) -> str:
        return self.named(stack)[0]

    def named(self, stack: int) -> tuple[str, FrameKind]:
        """The name of the allocations made at a stack, and the kind of frame it comes from."""
        if stack == NO_STACK:
            return NO_FRAMES, "none"
        found = self._labels.get(stack)
        if found is None:
            found = self._labels[stack] = self._name(stack)
        return found

    def _name(self, stack: int) -> tuple[str, FrameKind]:
        s = self.stacks
        fids = s.frames_of(stack)
        python = [f for f in fids if self.frame_kind(f) != "c++"]
        pick = next((f for f in python if self.frame_kind(f) == "user"), python[0] if python else None)
        if pick is not None:
            line = s.lines[pick] if self.lines_too else None
            return python_label(s.names[pick], s.files[pick], line), self.frame_kind(pick)
        return cpp_label([s.names[f] for f in fids]), "c++"

    def op(self, stack: int) -> str:
        """The op that allocated, from the stack's C++ frames: `aten::mm`, `MeanBackward0 (backward)` ("": none)."""
        if stack == NO_STACK:
            return ""
        found = self._ops.get(stack)
        if found is None:
            s = self.stacks
            names = [s.names[f] for f in s.frames_of(stack) if self.frame_kind(f) == "c++"]
            found = self._ops[stack] = _op_of(names)
        return found

    def lines(self, stack: int, cpp: bool = False) -> list[str]:
        """The stack as lines to read, innermost first: the Python frames, and the C++ ones memory_viz shows
        (cpp=True) or one line saying how many were folded."""
        s = self.stacks
        out: list[str] = []
        folded = 0
        for f in s.frames_of(stack):
            name, file, line = s.names[f], s.files[f], s.lines[f]
            if is_python(file):
                out.append(f"{file}:{line}  {name}")
            elif cpp and shown(name, file):
                out.append(name if file in ("", "??") else f"{file}  {name}")
            elif not cpp:
                folded += 1
        if folded:
            python = any(is_python(s.files[f]) for f in s.frames_of(stack))
            what = f"{folded} C++ frames folded" + ("" if python else f": {self.label(stack)}")
            out.insert(0, f"… {what}")
        return out
