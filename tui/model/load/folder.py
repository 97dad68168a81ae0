"""A folder of traces: a job of ranks (one TraceColumns, a process group per rank, clocks lined up), or a set of captures.

A folder is a set of captures, not a job, when its traces carry no rank identity (no distributedInfo
rank, no rank-named files), or when its files are one worker's successive tensorboard_trace_handler
captures (`host_1.<ns>.pt.trace.json`); tracetui's own traces/<workload>/ is one too. Several workers
of one job (`host_1...`, `host_2...`, one file each) stay a job. Captures are listed newest first.

Each file's rank comes from its distributedInfo, else its name (rank-N, rankN, workerN), else its
place in the folder; ranks claimed twice are numbered in file order, and said so. The ranks' clocks
differ: they are lined up on the first ProfilerStep#N every rank has (the lowest rank stays put),
else the raw clocks are kept; the TraceColumns's job says which, and how far each rank moved.
"""

from __future__ import annotations

import json
import re
import zlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

import numpy as np

from ..steps import align_on_steps, step_starts
from ..trace import LoadReport, TraceColumns

TRACE_SUFFIXES = (".json", ".json.gz", ".gz")
RANK_IN_NAME = re.compile(
    r"(?:rank|worker)[-_]?(\d+)", re.IGNORECASE
)  # a file's rank, by its name (parse.py reads it too)
HANDLER_NAME = re.compile(r"^(?P<worker>.+)\.(?P<stamp>\d{10,})\.pt\.trace\.json(?:\.gz)?$")
_INFO = re.compile(rb'"distributedInfo"\s*:\s*(\{[^{}]*\})')
_STEP = re.compile(rb'"name"\s*:\s*"ProfilerStep#(\d+)"')
CONCURRENT_NS = 10 * 10**9  # the workers of one job write their k-th capture within seconds of each other
HEAD_BYTES = 1 << 18  # the top-level keys before traceEvents lie within the first few KB of every known trace


@dataclass(frozen=True)
class FolderKind:
    """What a folder of traces is: a job of ranks or a set of captures (files newest first), and why."""

    kind: Literal["job", "captures"]
    files: list[Path]
    why: str

    @property
    def newest(self) -> Path:
        return self.files[0]


def trace_files(folder: Path) -> list[Path]:
    """The folder's trace files in name order (hidden and temporary files left out)."""
    return sorted(
        f for f in folder.iterdir() if f.is_file() and f.name.endswith(TRACE_SUFFIXES) and not f.name.startswith(".")
    )


NO_TRACES = "folder holds no .json or .json.gz traces"
SUBFOLDERS_NAMED = 4  # subfolders named in the hint, then a count


def no_traces(folder: Path) -> str:
    """What a folder without a trace of its own says, and where its subfolders keep theirs (tracetui profile writes
    traces/WORKLOAD/...): 'folder holds no ... traces; its folders do: traces/mlp (1), ...: give one of them'."""
    where = traces_below(folder)
    return f"{NO_TRACES}; {where}: give one of them" if where else NO_TRACES


def traces_below(folder: Path) -> str:
    """'its folders do: traces/mlp (1), traces/step (2)': the subfolders that hold traces ("" when none do)."""
    try:
        subs = sorted(d for d in folder.iterdir() if d.is_dir() and not d.name.startswith("."))
        found = [(d, n) for d in subs if (n := len(trace_files(d)))]
    except OSError:
        return ""
    if not found:
        return ""
    named = ", ".join(f"{d} ({n})" for d, n in found[:SUBFOLDERS_NAMED])
    more = f" and {len(found) - SUBFOLDERS_NAMED} more" if len(found) > SUBFOLDERS_NAMED else ""
    return f"its folders do: {named}{more}"


def folder_kind(folder: Path) -> FolderKind:
    """Is the folder a job of ranks or a set of captures? (Read from the names and the files' first bytes.)"""
    files = trace_files(folder)
    handler = [HANDLER_NAME.match(f.name) for f in files]
    if files and all(handler):
        workers: dict[str, list[Path]] = {}
        for f, m in zip(files, handler, strict=True):
            workers.setdefault(m.group("worker"), []).append(f)  # type: ignore[union-attr]
        if len(workers) == 1:
            return FolderKind(
                "captures", newest_first(files), "one worker's successive tensorboard_trace_handler files"
            )
        named = any(RANK_IN_NAME.search(w) for w in workers)
        if named or any(has_rank(f) for f in files) or concurrent(list(workers.values())):
            return FolderKind("job", files, f"{len(workers)} workers of one job")
        return FolderKind("captures", newest_first(files), f"{len(workers)} workers, one after another")
    if any(RANK_IN_NAME.search(f.name) or has_rank(f) for f in files):
        return FolderKind("job", files, "the files name their ranks")
    return FolderKind("captures", newest_first(files), "no file names a rank (distributedInfo or its name)")


def concurrent(workers: list[list[Path]]) -> bool:
    """Did the workers capture side by side (a job)? Each one's k-th capture written within CONCURRENT_NS of
    the others', over the same ProfilerStep range; workers run one after another (a script re-run) are not."""
    if len({len(files) for files in workers}) != 1:
        return False
    ordered = [sorted(files, key=_stamp) for files in workers]
    for same_k in zip(*ordered, strict=True):
        stamps = [_stamp(f) for f in same_k]
        if max(stamps) - min(stamps) > CONCURRENT_NS or len({step_range(f) for f in same_k}) > 1:
            return False
    return True


def _stamp(f: Path) -> int:
    """The handler's time stamp in ns (older torch wrote ms)."""
    m = HANDLER_NAME.match(f.name)
    value = int(m.group("stamp")) if m else 0
    return value * 1_000_000 if value < 10**15 else value


def step_range(path: Path) -> tuple[int, int] | None:
    """The first and last ProfilerStep#N of a trace (read through; None: no steps, or unreadable)."""
    steps = [int(n) for n in _STEP.findall(head(path, 0))]
    return (min(steps), max(steps)) if steps else None


def newest_first(files: list[Path]) -> list[Path]:
    """Captures newest first: by the handler's time stamp in the name where every file has one, else by mtime."""
    stamps = [HANDLER_NAME.match(f.name) for f in files]
    if all(stamps):
        return sorted(files, key=lambda f: (-int(HANDLER_NAME.match(f.name).group("stamp")), f.name))  # type: ignore[union-attr]
    return sorted(files, key=lambda f: (-_mtime(f), f.name))


def _mtime(f: Path) -> int:
    try:
        return f.stat().st_mtime_ns
    except OSError:
        return 0


def has_rank(path: Path) -> bool:
    """Does the trace's distributedInfo (before its events) give a rank?"""
    m = _INFO.search(head(path))
    if not m:
        return False
    try:
        info = json.loads(m.group(1))
    except ValueError:
        return False
    return isinstance(info, dict) and isinstance(info.get("rank"), int)


def head(path: Path, size: int = HEAD_BYTES) -> bytes:
    """The first bytes of a trace (size 0: all of it), gunzipped when it is gzip (b'' when it cannot be read)."""
    try:
        with open(path, "rb") as f:
            raw = f.read(size or -1)
    except OSError:
        return b""
    if raw[:2] != b"\x1f\x8b":
        return raw
    try:
        return zlib.decompressobj(wbits=31).decompress(raw, size)
    except zlib.error:
        return b""


def resolve_ranks(claims: list[tuple[str, int, str]]) -> tuple[list[int], list[str]]:
    """The rank of each (file, claimed rank, where the claim came from), and warnings about the claims."""
    ranks = [rank if source != "file order" else k for k, (_, rank, source) in enumerate(claims)]
    seen: dict[int, list[str]] = {}
    for (name, _, _), rank in zip(claims, ranks, strict=True):
        seen.setdefault(rank, []).append(name)
    twice = {r: names for r, names in seen.items() if len(names) > 1}
    if not twice:
        return ranks, []
    told = "; ".join(f"rank {r} by {', '.join(names)}" for r, names in sorted(twice.items()))
    return list(range(len(claims))), [f"ranks claimed more than once ({told}): numbered in file order instead"]


def merge_ranks(path: str, traces: list[TraceColumns]) -> TraceColumns:
    """Concatenate the ranks' columns, re-interning strings and offsetting tracks, chunks and sources."""
    claims = [(Path(t.path).name, int(t.ranks[0].get("rank", 0)), str(t.ranks[0].get("rank_from", ""))) for t in traces]
    ranks, notes = resolve_ranks(claims)
    method, shifts = align_on_steps({r: step_starts(t) for t, r in zip(traces, ranks, strict=True)})
    traces = [_shifted(t, shifts[r]) for t, r in zip(traces, ranks, strict=True)]
    offsets = np.cumsum([0] + [len(t.tracks) for t in traces])
    track_maps = [np.arange(len(t.tracks), dtype=np.int32) + offsets[k] for k, t in enumerate(traces)]
    from .merge import merge  # (a folder load's: not imported by a command that lists captures)

    merged = merge(traces, track_maps, [len(t.chunks) for t in traces])
    tracks = [
        replace(tr, id=tr.id + int(offsets[k]), rank=ranks[k], process=f"rank {ranks[k]} · {tr.process}")
        for k, t in enumerate(traces)
        for tr in t.tracks
    ]
    report = LoadReport()
    chunks: list[np.ndarray] = []
    sources: list[str] = []
    buffers: dict = {}
    for t in traces:
        c = np.array(t.chunks, copy=True)
        c[:, 3] += len(sources)
        chunks.append(c)
        buffers |= {index + len(sources): buf for index, buf in t.buffers.items()}
        sources += t.sources
        report.add(t.report)
    report.notes = notes
    infos = [
        {**t.ranks[0], "rank": r, "shift_us": shifts[r] / 1000, "file": Path(t.path).name}
        for t, r in zip(traces, ranks, strict=True)
    ]
    return TraceColumns(
        path=path,
        x=merged.x,
        inst=merged.inst,
        flow=merged.flow,
        names=merged.names,
        cat_names=merged.cat_names,
        shapes=merged.shapes,
        tracks=tracks,
        chunks=np.concatenate(chunks),
        sources=sources,
        devices=traces[0].devices,
        ranks=infos,
        job={"alignment": method, "ranks": len(traces)},
        flags=traces[0].flags,
        report=report,
        buffers=buffers,
    )


def _shifted(t: TraceColumns, shift: int) -> TraceColumns:
    if not shift:
        return t
    moved = {part: replace(getattr(t, part), ts=getattr(t, part).ts + shift) for part in ("x", "inst", "flow")}
    return replace(t, **moved)


def list_captures(folder: str | Path) -> list[Path]:
    """The captures of a folder, newest first ([] when it is a job of ranks, or not a folder)."""
    p = Path(folder)
    if not p.is_dir():
        return []
    kind = folder_kind(p)
    return [f for f in kind.files if _is_capture(f)] if kind.kind == "captures" else []


def skipped_captures(folder: str | Path) -> list[tuple[Path, str]]:
    """The files of a folder of captures that are no trace, each with why (what list_captures leaves out)."""
    p = Path(folder)
    if not p.is_dir():
        return []
    kind = folder_kind(p)
    if kind.kind != "captures":
        return []
    from .locate import NOT_JSON

    return [(f, first_problem(f) or NOT_JSON) for f in kind.files if not _is_capture(f)]


def _is_capture(path: Path) -> bool:
    """May the file be a capture: it starts as JSON does, and its first bytes show no reason it cannot be a trace
    (a small whole document of no events, `[]` or an object without traceEvents, is no capture to open)?"""
    return looks_like_json(path) and first_problem(path) is None


def looks_like_json(path: Path) -> bool:
    """Does the file (gunzipped) start as JSON does? A stray file among captures (a note, a cut download) is not
    taken for the newest capture; a damaged trace that starts right is, and its salvage says what it skipped."""
    return head(path, 1 << 12).lstrip()[:1] in (b"{", b"[")  # 4 KB: enough to see the first character


EMPTY = "empty trace (no JSON in the file)"  # the loader's words (load/locate.py) for what its first bytes show
FIRST_BYTES = 1 << 16  # enough to see that a file cannot be a trace; a big one is never read through here


def first_problem(path: Path) -> str | None:
    """Why a file cannot be a trace, from its first bytes, in the loader's words (None: it may be one; the load
    finds anything else, and salvages what it can): unreadable, empty, gzip that is no gzip, no JSON at all."""
    try:
        with open(path, "rb") as f:
            raw = f.read(FIRST_BYTES)
    except OSError as exc:
        return exc.strerror or str(exc)
    if not raw.strip():
        return EMPTY if len(raw) < FIRST_BYTES else None
    data = raw
    if raw[:2] == b"\x1f\x8b":
        try:
            data = zlib.decompressobj(wbits=31).decompress(raw, FIRST_BYTES)
        except zlib.error:
            return "corrupt gzip data (it does not decompress)"
    text = data.removeprefix(b"\xef\xbb\xbf").lstrip()
    if not text and len(raw) < FIRST_BYTES:
        return EMPTY
    from .locate import cut_before_events, not_json  # the loader's words (and its imports only where a file is read)

    if text and text[:1] not in (b"{", b"[") and b'"ph"' not in data:  # a head cut inside the events still has them
        return not_json(path, raw[:2] == b"\x1f\x8b")
    whole = len(raw) < FIRST_BYTES and len(data) < FIRST_BYTES  # the whole file (and all its JSON) is here
    if whole and text[:1] == b"{" and b'"traceEvents"' not in data and not text.rstrip().endswith(b"}"):
        return cut_before_events(len(data))  # said before the screen starts, in the loader's words
    if whole:  # a small whole document with nothing to load: said before the screen starts, as the load says it
        return _no_events(text)
    return None


def _no_events(text: bytes) -> str | None:
    """The loader's words for a whole JSON document that holds no trace: an object without traceEvents
    (locate.py), an array of no events (loader.py); None when it may hold some (the load decides)."""
    import orjson

    try:
        doc = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None  # damaged: the load salvages what it can
    if isinstance(doc, dict) and not isinstance(doc.get("traceEvents"), list):
        return "no 'traceEvents' array in the JSON object"
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    if isinstance(events, list) and not any(isinstance(e, dict) for e in events):
        return "no trace events in the file"
    return None
