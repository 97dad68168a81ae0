"""A chunk's columns from the compiled scan (scan.py), added to a Builder as Builder.add adds msgspec's events.

The fast path of the decode: numba compiles the scan once (kept in numba's cache beside the code), and a chunk
is read into rows of ints, floats and hashes without a Python object per event. Only what differs per distinct
value runs in Python (a name, a category, a thread, an input shape: a few thousand in a gigabyte). Everything
that can refuse a chunk (a number the scan does not read exactly, a string that is not UTF-8, a metadata event
msgspec does not take, a hash shared by two different strings) is checked before the builder is touched, so a
refused chunk goes down the msgspec path (decode.py) whole, as if the scan had not run.

It reads a file of NATIVE_MIN_BYTES and more by default where numba is installed (the `fast` extra) and has
compiled it: the first such file reads with msgspec and starts numba's compile in a process of its own
(native_warm.py: 20-80 s of one core, niced; then it loads from numba's cache in about 0.3 s per process).
`TRACETUI_DECODE=native` asks for it whatever numba's cache holds (its first use waits for the compile), `msgspec`
never. On 2 cores (benchmarks/RESULTS.md, round 16) a 1 GB first `summary` took 0.54-0.60x msgspec's time, with
1.1x the file in peak memory against msgspec's 1.06x; below about 320 MB numba's start costs more than the scan
saves (round 12), and its 125 MB of libraries put the peak past 1.5x the file, hence the threshold.
"""

from __future__ import annotations

import codecs
import functools
import threading
from collections import Counter as Tally
from collections.abc import Callable
from dataclasses import dataclass

import msgspec
import numpy as np

from .. import settings
from ..errors import said_once
from ..limits import DUR_NS, TIME_NS
from . import native_warm, schema
from .build import Builder, _norm, ac2g, add_meta, by_phase, start_times
from .bulk import to_ns

_ONE = msgspec.json.Decoder(schema.AnyEvent)  # type: ignore[valid-type]
_STR = msgspec.json.Decoder(str)
COUNTS: Tally = Tally()  # chunks scanned, and refused by reason, in this process (for benchmarks and tests)


def mode() -> str:
    """The decode path TRACETUI_DECODE asks for: `auto` (the default: the compiled scan where numba has compiled it,
    see native_warm.py), `native` (the compiled scan, compiled first where it must be) or `msgspec`; any other value
    is said once, and reads as the default: settings.py reads it."""
    return settings.decode_path()


@functools.cache
def _scan_module():
    """scan.py, or None where numba is not installed (or does not run here)."""
    try:
        from . import scan
    except Exception:  # noqa: BLE001 - numba missing, or built for another numpy: the msgspec path reads it all
        return None
    return scan


NATIVE_MIN_BYTES = 320 << 20  # below this msgspec reads faster (numba costs a process 0.4 s to load): RESULTS.md


def asked(size: int) -> bool:
    """Whether the scan is asked for a file whose events are `size` bytes: a file big enough for it to pay
    (NATIVE_MIN_BYTES), and TRACETUI_DECODE=native, or the default where numba has compiled the scan (its mark in
    the cache folder: numba is neither imported nor asked about)."""
    if size < NATIVE_MIN_BYTES:
        return False
    how = mode()
    return how == "native" or (how == "auto" and native_warm.ready())


def wanted(size: int) -> bool:
    """Whether to scan the chunks of a file whose events are `size` bytes (asked, and numba here: numba is not even
    imported for a smaller file). Asked for where numba is missing, or before numba has compiled the scan, says
    so; by default, a file big enough that finds numba installed but the scan not compiled reads with msgspec and
    starts the compile behind (native_warm.py), said once."""
    if not asked(size):
        if size >= NATIVE_MIN_BYTES and mode() == "auto":
            _compile_behind()
        return False
    scan = _scan_module()
    if scan is None:
        if mode() == "native":
            said_once(
                "TRACETUI_DECODE=native needs numba (pip install 'tracetui[fast]'), which does not import here: msgspec"
            )
        return False
    if _compiles_first(scan):
        if mode() == "auto":  # the mark outlived numba's cache (cleared, another numba): compiled again, behind
            _compile_behind()
            return False
        said_once(COMPILE_NOTE)
    return True


COMPILE_NOTE = (
    "compiling the native decoder with numba, once: 20 s to a few minutes on a busy machine (TRACETUI_DECODE=native)"
)
BEHIND_NOTE = (
    f"the native decoder (numba) is compiling in the background, once, for traces of {NATIVE_MIN_BYTES / 1e6:.0f} MB"
    " and more (about 1.5x as fast on 2 cores); this one reads with msgspec (TRACETUI_DECODE=msgspec: never)"
)


def _compile_behind() -> None:
    if native_warm.compile_behind():
        said_once(BEHIND_NOTE)


def prepare(compiling: Callable[[], None] | None = None) -> bool:
    """Before a scan: where numba's cache holds no compiled scan, call `compiling` (to say so where stderr is not
    seen: the viewer); then compile it, or load it from numba's cache, now, so the wait comes before the first
    chunk, not inside it. False, said once, where numba fails to compile or load it (a numba or LLVM this code was
    not written for): msgspec then reads the file, as without numba. Compiled, it is marked ready for the default
    (native_warm.py)."""
    scan = _scan_module()
    if scan is None:
        return False
    if _compiles_first(scan) and compiling:
        compiling()
    try:
        warm()
    except Exception as exc:  # noqa: BLE001 - numba's compiler failed: the default path reads it all
        why = (str(exc).strip().splitlines() or [""])[0][:160]  # numba's errors run to pages: their first line
        said_once(f"the native decoder did not compile here ({type(exc).__name__}: {why}): msgspec reads")
        return False
    native_warm.mark_ready()
    return True


def _compiles_first(scan) -> bool:
    """Whether numba's cache lacks the compiled scan or nesting of this source (their first use then compiles)."""
    from ..nesting import compiled_module

    nesting = compiled_module()
    compiled = [scan.scan, *(nesting.COMPILED if nesting is not None else ())]
    try:  # numba's own index, a stale one read as empty
        return not all(f._cache._cache_file._load_index() for f in compiled)
    except Exception:  # noqa: BLE001 - numba's internals moved: say nothing rather than fail a load
        return False


def warm() -> None:
    """Compile the scan and the nesting (or load them from numba's cache) by reading a small chunk of every kind it
    reads (not counted in COUNTS: it is no chunk of a trace)."""
    from ..nesting import compiled_module

    counted = COUNTS.copy()
    try:
        plan = read(bytearray(_SAMPLE))
        if plan is None:
            raise RuntimeError("the compiled scan refused its own sample")
        add(Builder(), plan, np.zeros(plan.count, np.int32), np.arange(plan.count, dtype=np.int32))
        nesting = compiled_module()  # the nesting the analyses of a scanned trace take
        if nesting is not None:
            nesting.warm()
    finally:
        COUNTS.clear()
        COUNTS.update(counted)


# One chunk with an event of every kind the scan reads: reading it compiles every path of the scan.
_SAMPLE = (
    b'[{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":"2","ts":10.5,"dur":2,'
    b'"args":{"External id":1,"correlation":2,"Python id":3,"Python parent id":null,"Input Dims":[[2,2]],"bytes":8}},'
    b'{"ph":"i","name":"[memory]","pid":1,"tid":1,"ts":11,"s":"t","args":{"Bytes":512,"Device Type":1,'
    b'"Device Id":0,"Total Allocated":512,"Total Reserved":1024,"Addr":4096}},'
    b'{"ph":"s","cat":"ac2g","name":"launch","id":2,"pid":1,"tid":1,"ts":11},'
    b'{"ph":"f","cat":"ac2g","name":"launch","id":2,"pid":0,"tid":7,"ts":12,"bp":"e"},'
    b'{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"main \\u00e9 \xc3\xa9"}},'
    b'{"ph":"B","name":"x","pid":1,"tid":1,"ts":13}]'
)


class _Rows(threading.local):
    """A thread's rows for the scan, reused from chunk to chunk (grown when a chunk holds more events)."""

    def __init__(self) -> None:
        self.room = 0

    def get(self, room: int):
        if room > self.room:
            scan = _scan_module()
            self.room = room
            self.ints = np.empty((room, scan.INTS), np.int64)
            self.floats = np.empty((room, 2), np.float64)
            self.hashes = np.empty((room, scan.HASHES), np.uint64)
        return self.ints, self.floats, self.hashes


_ROWS = _Rows()
_ROOM_GUESS = 48  # bytes per event assumed at first: Kineto's events are 150-500 bytes; the smallest valid is 10


def scan_chunk(data) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """The rows of a chunk ('[' + events + ']'), with the chunk's bytes as an array; None: the scan refuses it."""
    scan = _scan_module()
    b = np.frombuffer(data, np.uint8)
    if scan.has_high_bytes(b):
        try:
            codecs.utf_8_decode(data, "strict", True)
        except UnicodeDecodeError:
            COUNTS["not UTF-8"] += 1
            return None
    for room in (len(b) // _ROOM_GUESS + 16, len(b) // 10 + 16):
        ints, floats, hashes = _ROWS.get(room)
        count, why = scan.scan(b, ints, floats, hashes)
        if why != scan.NO_ROOM:
            break
    if why:
        COUNTS[scan.REASONS[why]] += 1
        return None
    return b, ints[:count], floats[:count], hashes[:count]


@dataclass
class _Strings:
    """Equal strings of a column grouped: the group of each event, and each group's text in order of first
    appearance (as Interner.field would meet them)."""

    inverse: np.ndarray
    texts: list


def _text(b, start: int, length: int, escaped: bool) -> str | None:
    raw = b[start : start + length].tobytes()
    try:
        return _STR.decode(b'"' + raw + b'"') if escaped else raw.decode("utf-8")
    except (msgspec.DecodeError, UnicodeDecodeError):
        return None


def _strings(b, rows: np.ndarray, hashes: np.ndarray, col: int, hcol: int) -> _Strings | None:
    """A string column of the rows grouped (None: a string the scan cannot vouch for)."""
    starts, lengths = rows[:, col], rows[:, col + 1]
    firsts, inverse = _scan_module().first_seen(b, np.ascontiguousarray(hashes[:, hcol]), starts, lengths)
    texts = [_text(b, int(starts[k]), int(lengths[k]), bool(rows[k, col + 2])) for k in firsts.tolist()]
    return None if None in texts else _Strings(inverse, texts)


def _tracks(b, rows: np.ndarray, hashes: np.ndarray) -> tuple[np.ndarray, list] | None:
    """(pid, tid) pairs as written, grouped: each event's group and each group's pair of Python values."""
    scan = _scan_module()
    firsts, inverse = scan.first_seen_tracks(b, rows, hashes)
    pairs = []
    for k in firsts.tolist():
        pair: list[int | str] = []
        for col in (scan.PID, scan.TID):
            if rows[k, col + 3] == 1:
                text = _text(b, int(rows[k, col]), int(rows[k, col + 1]), bool(rows[k, col + 2]))
                if text is None:
                    return None
                pair.append(text)
            else:
                pair.append(int(rows[k, col]))
        pairs.append(tuple(pair))
    return inverse, pairs


def _shapes(b, rows: np.ndarray) -> tuple[np.ndarray, _Strings | None] | None:
    """The events with input dims (either key, as shape_ids reads them) and their texts as written, grouped."""
    scan = _scan_module()
    new, old = rows[:, scan.DIMS + 1] >= 0, rows[:, scan.DIMS_OLD + 1] >= 0
    has = np.flatnonzero(new | old)
    if not len(has):
        return has, None
    pick = new[has]
    starts = np.where(pick, rows[has, scan.DIMS], rows[has, scan.DIMS_OLD])
    lengths = np.where(pick, rows[has, scan.DIMS + 1], rows[has, scan.DIMS_OLD + 1])
    firsts, inverse = scan.first_seen(b, scan.span_hashes(b, starts, lengths), starts, lengths)
    texts = [b[int(starts[k]) : int(starts[k] + lengths[k])].tobytes() for k in firsts.tolist()]
    return has, _Strings(inverse, texts)


@dataclass
class _Group:
    """One phase's events of a chunk, read and checked, ready to add."""

    code: int
    rows: np.ndarray
    ts: np.ndarray
    at: np.ndarray  # the events' positions in the chunk
    floats: np.ndarray
    names: _Strings | None = None
    cats: _Strings | None = None
    tracks: tuple[np.ndarray, list] | None = None
    shapes: tuple[np.ndarray, _Strings | None] | None = None
    metas: list | None = None
    phases: Tally | None = None


@dataclass
class Plan:
    """A chunk read by the scan, every check passed: what add() puts into the builder."""

    count: int
    groups: list[_Group]
    inexact: bool


def read(data) -> Plan | None:
    """Scan a chunk ('[' + its events + ']') and check all of it; None: the msgspec path must read it."""
    scanned = scan_chunk(data)
    if scanned is None:
        return None
    b, ints, floats, hashes = scanned
    scan = _scan_module()
    code = ints[:, scan.CODE]
    timed = code < schema.Metadata.code
    ts, inexact = start_times(floats[:, scan.F_TS], lambda: bytes(data[1:-1]))
    if ts.dtype.kind == "f":  # an event without a time, or an impossible one: the msgspec path leaves it out, and says
        with np.errstate(invalid="ignore"):
            if (~(np.abs(ts) < TIME_NS / 1000) & timed).any():
                COUNTS["a time left out"] += 1
                return None
        ts = to_ns(np.where(timed, ts, 0))  # only untimed kinds (metadata) have none
    groups = []
    for kind, idx in by_phase(code):
        at = np.arange(len(code)) if idx is None else idx  # copies: the rows are the thread's, reused for its next
        rows, fl, hs = (a.take(at, axis=0) for a in (ints, floats, hashes))  # chunk before this one is added
        group = _read_group(b, kind, rows, fl, hs, ts[at], at)  # (take: about 3x as fast as [at] on rows of 35 ints)
        if group is None:
            COUNTS[f"a field of phase {kind} not read alike"] += 1
            return None
        groups.append(group)
    COUNTS["scanned"] += 1
    return Plan(len(ints), groups, inexact)


def _read_group(b, kind: int, rows, floats, hashes, ts, at) -> _Group | None:
    scan = _scan_module()
    group = _Group(kind, rows, ts, at, floats)
    if kind == schema.Metadata.code:
        group.metas = _metas(b, rows)
        return group if group.metas is not None else None
    if kind == schema.OTHER:
        group.phases = Tally(map(chr, rows[:, scan.PHASE].tolist()))
        return group
    if kind == schema.Duration.code:
        dur = floats[:, scan.F_DUR]
        if ((dur < 0) | (dur >= DUR_NS / 1000)).any():
            return None
        group.shapes = _shapes(b, rows)
        if group.shapes is None:
            return None
    group.names = _strings(b, rows, hashes, scan.NAME, scan.H_NAME)
    group.tracks = _tracks(b, rows, hashes)
    if kind != schema.Instant.code and kind != schema.GlobalInstant.code:
        group.cats = _strings(b, rows, hashes, scan.CAT, scan.H_CAT)
        if group.cats is None:
            return None
    return group if group.names is not None and group.tracks is not None else None


def _metas(b, rows) -> list | None:
    """The metadata events, decoded one by one by msgspec (a handful per trace)."""
    scan = _scan_module()
    out = []
    for s, e in zip(rows[:, scan.EV_START].tolist(), rows[:, scan.EV_END].tolist(), strict=True):
        try:
            event = _ONE.decode(b[s:e].tobytes())
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            return None
        if not isinstance(event, schema.Metadata):
            return None
        out.append(event)
    return out


def add(builder: Builder, plan: Plan, chunk_ids: np.ndarray, pos: np.ndarray) -> None:
    """Put a read chunk into the builder, as Builder.add would have put msgspec's events."""
    builder.inexact_chunks += plan.inexact
    for g in plan.groups:
        if g.code == schema.Duration.code:
            _add_x(builder, g, chunk_ids[g.at], pos[g.at])
        elif g.code in (schema.Instant.code, schema.GlobalInstant.code):
            _add_instants(builder, g)
        elif g.code in (schema.FlowStart.code, schema.FlowEnd.code, schema.FlowStep.code):
            _add_flows(builder, g)
        elif g.code == schema.Metadata.code:
            for event in g.metas or ():
                add_meta(builder.meta, event)
        else:
            for ph, count in (g.phases or {}).items():
                builder.unknown[ph] = builder.unknown.get(ph, 0) + count


def _interned(interner, strings: _Strings) -> np.ndarray:
    return np.array([interner(t) for t in strings.texts], np.int32)[strings.inverse]


def _track_ids(builder: Builder, tracks: tuple[np.ndarray, list]) -> np.ndarray:
    inverse, pairs = tracks
    raw = builder.raw_tracks
    for p, t in pairs:
        if (p, t) not in raw:
            raw[(p, t)] = builder.tracks((_norm(p), _norm(t)))
    return np.array([raw[pair] for pair in pairs], np.int32)[inverse]


def _add_x(builder: Builder, g: _Group, chunks: np.ndarray, pos: np.ndarray) -> None:
    scan = _scan_module()
    assert g.shapes is not None and g.tracks is not None and g.names is not None and g.cats is not None
    r = g.rows
    ext, old, corr = r[:, scan.EXT], r[:, scan.EXT_OLD], r[:, scan.CORR]
    has, dims = g.shapes
    shape = np.full(len(r), -1, np.int32)
    if dims is not None:
        shape[has] = _interned(builder.shapes, dims)
    builder.put_x(
        g.ts,
        to_ns(g.floats[:, scan.F_DUR]),
        _track_ids(builder, g.tracks),
        _interned(builder.names, g.names),
        _interned(builder.cats, g.cats),
        np.where(ext > 0, ext, np.where(old > 0, old, -1)),
        np.where(corr > 0, corr, -1),
        np.maximum(r[:, scan.PY_ID], -1),
        np.maximum(r[:, scan.PY_PARENT], -1),
        shape,
        r[:, scan.NBYTES].copy(),
        chunks,
        pos,
    )


def _add_instants(builder: Builder, g: _Group) -> None:
    scan = _scan_module()
    assert g.names is not None and g.tracks is not None
    columns = (g.rows[:, scan.MEM + k].copy() for k in range(6))
    builder.put_instants(g.ts, _track_ids(builder, g.tracks), _interned(builder.names, g.names), *columns)


def _add_flows(builder: Builder, g: _Group) -> None:
    scan = _scan_module()
    assert g.cats is not None and g.tracks is not None
    fid = g.rows[:, scan.FLOW_ID].copy()
    start = g.code == schema.FlowStart.code
    builder.put_flows(g.ts, _track_ids(builder, g.tracks), fid, start, ac2g(g.cats.texts)[g.cats.inverse])
