"""Tracks: processes holding CPU threads or GPU streams, named and ordered for humans."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from .cats import GPU_CATS, Cat, of_cats
from .sets import distinct

META_PIDS = {"Spans", "Traces", "", -1}
TrackKind = Literal["cpu", "gpu", "meta"]


@dataclass
class Meta:
    """Names and order of processes and threads, from M events (the last one wins)."""

    process_name: dict = field(default_factory=dict)
    process_labels: dict = field(default_factory=dict)
    process_sort: dict = field(default_factory=dict)
    thread_name: dict = field(default_factory=dict)
    thread_sort: dict = field(default_factory=dict)

    def update(self, more: Meta) -> None:
        for name in ("process_name", "process_labels", "process_sort", "thread_name", "thread_sort"):
            getattr(self, name).update(getattr(more, name))


@dataclass(frozen=True)
class Track:
    """One (pid, tid) row of the trace."""

    id: int
    rank: int
    pid: int | str
    tid: int | str
    kind: TrackKind
    name: str
    process: str
    order: tuple
    events: int = 0

    @property
    def is_gpu(self) -> bool:
        return self.kind == "gpu"


def build_tracks(keys: list, track_col: np.ndarray, cat_col: np.ndarray, meta: Meta, rank: int) -> list[Track]:
    """Classify, name and order every (pid, tid) key seen in events."""
    gpu = np.zeros(len(keys), bool)
    if len(track_col):
        is_gpu = of_cats(cat_col, GPU_CATS)
        gpu[distinct(track_col[is_gpu])] = True
    meta_only = np.zeros(len(keys), bool)
    counts = np.bincount(track_col, minlength=len(keys)) if len(track_col) else np.zeros(len(keys), int)
    if len(track_col):
        weird = of_cats(cat_col, (Cat.OVERHEAD, Cat.TRACE))
        weird_counts = np.bincount(track_col[weird], minlength=len(keys))
        meta_only = (counts > 0) & (counts == weird_counts)
    devices = {pid for (pid, _), is_gpu in zip(keys, gpu, strict=True) if is_gpu}  # a GPU's pid is not a process
    out = []
    for i, (pid, tid) in enumerate(keys):
        kind: TrackKind = "gpu" if gpu[i] else ("meta" if meta_only[i] or pid in META_PIDS else "cpu")
        out.append(_track(i, rank, pid, tid, kind, meta, pid in devices, int(counts[i])))
    return out


def _track(i: int, rank: int, pid, tid, kind: TrackKind, meta: Meta, device: bool = False, events: int = 0) -> Track:
    order: tuple
    tname = meta.thread_name.get((pid, tid), "")
    label = meta.process_labels.get(pid) or meta.process_name.get(pid) or ""
    if kind == "gpu":
        word = next((w for w in ("MTIA", "XPU", "HPU") if w in label.upper()), "GPU")
        name = f"{word} {pid} stream {_stream(tid)}"
        process = label if label.upper().startswith(word) else f"{word} {pid}" + (f" ({label})" if label else "")
        order = (
            1,
            meta.process_sort.get(pid, _num(pid)),
            meta.thread_sort.get((pid, tid), _num(_stream(tid))),
            str(tid),
        )
    elif kind == "cpu":
        name = _thread_label(pid, tid, tname, device)
        process = f"{meta.process_name.get(pid, 'process')} {pid}".strip()
        main_first = 0 if name == "python main thread" else 1
        order = (0, _num(pid), main_first, meta.thread_sort.get((pid, tid), _num(tid)), str(tid))
    else:
        name = tname or f"{pid} {tid}".strip() or "trace"
        process = "profiler"
        order = (2, str(pid), str(tid))
    return Track(i, rank, pid, tid, kind, name, process, order, events)


def lane_titles(tracks: list[Track], runs: dict[int, str] | None = None) -> dict[int, tuple[str, str]]:
    """Per track id, the timeline's (title, subtitle): a CPU lane is titled CPU, its thread's name below it.

    `CPU main thread` over `python main thread · tid 19392`; a GPU lane keeps its name (`GPU 0 stream 7`).
    runs: per track, the Python frame its first event is (`tqdm/_monitor.py(60): run`): a thread other than
    the main one is then titled by the package it runs (`CPU tqdm thread`), as the trace says.
    Two lanes of one rank never share a title: alike ones add their thread id, then their process id.
    """
    out = {t.id: _title(t, (runs or {}).get(t.id, "")) for t in tracks}
    for extra in (lambda t: f"tid {t.tid}", lambda t: f"pid {t.pid}"):
        seen: dict[tuple[int, str], list[Track]] = {}
        for t in tracks:
            seen.setdefault((t.rank, out[t.id][0]), []).append(t)
        for alike in (g for g in seen.values() if len(g) > 1):
            for t in alike:
                out[t.id] = (f"{out[t.id][0]} ({extra(t)})", out[t.id][1])
    return out


_TOLD_APART = re.compile(r"^(?P<base>.+) \((?P<extra>(?:tid|pid) \S+)\)$")  # CPU main thread (tid 3553)


def title_forms(title: str) -> list[str]:
    """A lane title, then shorter forms that keep what tells alike lanes apart (their thread or process id):
    `CPU main thread (tid 3553)`, `CPU main (tid 3553)`, `CPU tid 3553`, `tid 3553`."""
    m = _TOLD_APART.match(title)
    if not m:
        return [title]
    base, extra = m.group("base"), m.group("extra")
    shorter = base.removesuffix(" thread")
    return [title, f"{shorter} ({extra})", f"{base.split()[0]} {extra}", extra]


def _title(t: Track, runs: str = "") -> tuple[str, str]:
    if t.kind != "cpu":
        return t.name, ""
    package = package_of(runs) if t.name != "python main thread" else ""
    what = f"{package} thread" if package else _generic(t.name).removeprefix("python ")
    return f"CPU {what}", f"{t.name} · tid {t.tid}" if str(t.tid) not in t.name else t.name


def package_of(frame: str) -> str:
    """The top package of a Python frame's file (`tqdm/_monitor.py(60): run` -> `tqdm`; '' when not a frame)."""
    path = frame.split("(", 1)[0] if ".py(" in frame else ""
    parts = [p for p in path.replace("\\", "/").split("/") if p]
    if len(parts) < 2:
        return ""
    for marker in ("site-packages", "dist-packages"):
        if marker in parts[:-1]:
            return parts[parts.index(marker) + 1].removesuffix(".py")
    return parts[0] if not parts[0].startswith(("<", ".")) else ""


def _generic(name: str) -> str:
    """Kineto's `thread 0 (python3)` as `thread 0`: the process is said by the header above."""
    head, _, rest = name.partition(" (")
    return head if head.startswith("thread ") and rest.endswith(")") else name


def _thread_label(pid, tid, tname: str, device: bool = False) -> str:
    """What the trace says of a CPU thread: autograd's, the main thread (tid == pid of a real process: a GPU's
    pid 0 holding a thread 0 is not one), else its own name."""
    low = tname.lower()
    if "autograd" in low:
        return "autograd thread" + (f" ({tid})" if tid != pid else "")
    if (tid == pid and not device) or "pt_main_thread" in low:
        return "python main thread"
    return tname or f"thread {tid}"


def _stream(tid):
    if isinstance(tid, str) and tid.startswith("stream "):
        return tid.split(" ", 1)[1].strip()
    return tid


def _num(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        return float("inf")
