"""Writing an export: the original file's bytes copied as they are, the new events spliced in before its events
array closes, into a new file (gzip when its name ends in .gz), never over the input.

A file that is not whole JSON (cut short, a damaged head, events that did not parse) cannot be spliced: its
events that parse are copied, each as its own bytes, into a new top-level object with the metadata tracetui read
from it, and the export says how many it left out. The file is written beside its target and renamed into place,
so a failed export leaves nothing half written.
"""

from __future__ import annotations

import gzip
import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
import orjson

from ..analyses.results import Results
from ..errors import TraceError
from ..load.locate import open_source
from ..load.source import Source, whole_events
from .added import KINDS, Added, added_events


class ExportError(ValueError):
    """An export that cannot be written as asked (its target is the input, a folder of ranks, ...): one line."""


@dataclass
class Exported:
    """What an export wrote."""

    path: str
    added: dict[str, int]  # events added per kind
    left_out: int = 0  # original events that did not parse (a damaged file), not copied
    notes: list[str] = field(default_factory=list)


def export(a: Results, out: str | os.PathLike[str], kinds: Sequence[str] = KINDS, step: int | None = None) -> Exported:
    """Write the trace of `a` to `out` with the kinds of events asked for added (see added.py)."""
    trace = a.trace
    if trace.job or len(trace.sources) != 1:
        raise ExportError(f"{trace.path}: export writes one trace file: give one rank's file of the folder")
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        raise ExportError(f"unknown counter {bad[0]!r}: choose from {', '.join(KINDS)}")
    source, target = Path(trace.path), Path(out)
    check_target(source, target)
    src = open_source(Path(trace.sources[0]) if trace.sources[0] != trace.path else source, None)
    added = added_events(a, kinds, src.top.baseTimeNanoseconds or 0, step)
    whole = not (
        src.truncated
        or src.gz_truncated
        or src.notes
        or trace.report.skipped
        or trace.report.garbled
        or trace.report.repaired
        or trace.report.unseparated  # (copied as they are, two events without a comma are no JSON)
    )
    left_out = 0
    if whole:
        pieces: Iterable[bytes | memoryview] = _spliced(src, added)
    else:
        pieces, left_out = _rebuilt(src, added)
    _write(target, pieces)
    notes = added.notes + (
        [f"{left_out:,} damaged event{'' if left_out == 1 else 's'} left out (not JSON)"] if left_out else []
    )
    return Exported(str(target), added.counts, left_out, notes)


def check_target(source: Path, target: Path) -> None:
    """Never the input itself (by any name), never a folder, never a loop of symbolic links."""
    try:
        same = target.resolve() == source.resolve()
    except RuntimeError:  # (Python's word for a loop of links)
        raise ExportError(f"{target}: a loop of symbolic links; name another file") from None
    if not same and target.exists():
        try:
            same = target.samefile(source)
        except OSError:
            same = False
    if same:
        raise ExportError(
            f"{target}: that is the trace itself, and tracetui never writes over its input: name another file"
        )
    if target.is_dir():
        raise ExportError(f"{target}: is a folder; give the file to write (OUT.json or OUT.json.gz)")


def _spliced(src: Source, added: Added) -> list[bytes | memoryview]:
    """The file's bytes with the new events before the events array's closing bracket."""
    body = memoryview(src.buf)
    if not added.texts:
        return [body]
    first = b",\n" if _holds_events(src) else b"\n"
    return [body[: src.end], first + b",\n".join(added.texts) + b"\n", body[src.end :]]


def _holds_events(src: Source) -> bool:
    """Is there anything but whitespace in the events array (read back from its end, a little at a time)?"""
    look = 64
    while True:
        lo = max(src.start, src.end - look)
        if bytes(src.buf[lo : src.end]).strip():
            return True
        if lo == src.start:
            return False
        look *= 16


def _rebuilt(src: Source, added: Added) -> tuple[list[bytes | memoryview], int]:
    """A new top-level object: the events that parse, the new ones, the metadata read from the file."""
    kept, left_out = [], 0
    for start, end, text, _ in whole_events(src.buf, src.start, src.end, _an_event):
        if text is not None:
            kept.append(text)
        elif bytes(src.buf[start:end]).strip().rstrip(b",").strip():
            left_out += 1
    top = {k: v for k, v in msgspec.structs.asdict(src.top).items() if k != "traceEvents" and v is not None}
    rest = orjson.dumps(top)[1:-1]
    head = b'{"traceEvents":[\n' + b",\n".join(kept + added.texts) + b"\n]"
    return [head + (b"," + rest if rest else b"") + b"}\n"], left_out


def _an_event(text: bytes) -> bytes | None:
    """The text, where it is one JSON object with a phase (not an object of a damaged event's args)."""
    try:
        value = msgspec.json.decode(text)
        return text if isinstance(value, dict) and "ph" in value else None
    except msgspec.DecodeError:
        return None


def _write(target: Path, pieces: Iterable[bytes | memoryview]) -> None:
    """Write beside the file, then rename it into place (gzip when the name ends in .gz). A symbolic link's target
    is what is written (the link stays); what is no regular file (a device such as /dev/stdout or /dev/full, a
    named pipe) is written into, never renamed over: renaming over /dev/full replaced the device with a file."""
    if target.exists() and not target.is_file():  # (through any links: /dev/stdout is /proc/self/fd/1)
        _write_into(target, pieces)
        return
    real = target.resolve() if target.is_symlink() else target
    part = real.with_name(f".{real.name}.{os.getpid()}.part")
    try:
        _write_pieces(part, target, pieces)
        if real.exists():  # a file written over keeps who may read it (640 stays 640)
            os.chmod(part, stat.S_IMODE(real.stat().st_mode))
        os.replace(part, real)
    except OSError as exc:
        part.unlink(missing_ok=True)
        raise TraceError(target, f"cannot write the export: {exc.strerror or exc}") from None


def _write_into(target: Path, pieces: Iterable[bytes | memoryview]) -> None:
    """Write into a file that is no regular file (a device, a pipe) as it is; a pipe whose reader is gone (| head)
    raises BrokenPipeError, which the command ends on quietly, as every command does."""
    try:
        _write_pieces(target, target, pieces)
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise TraceError(target, f"cannot write the export: {exc.strerror or exc}") from None


def _write_pieces(path: Path, target: Path, pieces: Iterable[bytes | memoryview]) -> None:
    """Write the pieces to path, gzipped when the target's name ends in .gz (the gzip header names the target, not
    the temporary file: gunzip -N restores that name)."""
    with open(path, "wb") as raw:
        with gzip.GzipFile(target.name, "wb", 6, raw) if target.suffix == ".gz" else raw as f:
            for piece in pieces:
                f.write(piece)
