"""A report asked again of a cached trace, written back as it was printed: no numpy, no model (issue 55).

Opening a trace's cache entry costs what numpy and the model cost to import (0.4-0.5 s of a cached `summary` of
the 1 GB tile on 2 cores, `benchmarks/RESULTS.md`); asking the same report again, of the same file, with the same
options, on the same terminal and with the same code, cannot print anything else. So a report that ran from the
cache entry keeps what it printed (stdout and stderr, in the order written) in the entry, under a name hashing all
it depends on, and the next such run writes that back (about 0.1 s: the interpreter and the command line).

What the name hashes (_key): the command and every option as parsed (the trace as named), the source files of
tracetui as they are (code_stamp.py: any edit), the interpreter, the site-packages folders' modification times (a
package installed, upgraded or removed), the TRACETUI_* settings and the variables that change a terminal's width
or encoding, and whether stdout and stderr are terminals and how wide. The entry's own name holds the file's
path, size, modification time and the hash of its head and tail (cachedir.py), so a changed trace has another.

Kept only from a run that found the entry there and succeeded (a first load's progress and cache notes are not a
cached run's output); never for --no-cache, a folder, demo:NAME, or a graph replay whose capture is given or lies
beside it (another file the report reads). At most KEEP records per entry (the least recently used go); they go
with their entry when the cache drops it. A record that cannot be read is ignored, and the command runs.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # (the command line starts without pathlib, hashlib or json: --help and --version are light)
    import argparse
    from pathlib import Path

REPLAYED = frozenset({"summary", "steps", "ops", "kernels", "code", "explain"})  # reports of one trace's entry alone
FOLDER = "replay"  # in the entry
KEEP = 16  # records per entry
MOST_BYTES = 8 << 20  # a larger output is not kept
VERSION = 1  # of the record's layout
TERMINAL_ENV = ("COLUMNS", "LINES", "TERM", "NO_COLOR", "FORCE_COLOR", "LANG", "LC_ALL", "LC_CTYPE", "PYTHONIOENCODING")
_RECORD = re.compile(r"[0-9a-f]{32}\.json\Z")
_STREAMS = ("out", "err")


def record_for(args: argparse.Namespace) -> Path | None:
    """Where this command's output is kept in its trace's cache entry; None when it is not kept (see the module's
    note), or the entry is not there."""
    if args.command not in REPLAYED or args.no_cache or getattr(args, "graph_capture", None):
        return None
    from pathlib import Path

    from ..model.analyses.graphs.beside import capture_path
    from ..model.load.cachedir import entry_dir
    from ..model.samples import PREFIX

    if str(args.trace).startswith(PREFIX):  # a shipped sample, even where a file of that name is here
        return None
    trace = Path(args.trace)
    try:
        if not trace.is_file() or capture_path(trace) is not None:
            return None
        entry = entry_dir(trace)
        if not (entry / "meta.json").is_file():
            return None
    except (OSError, ValueError):  # (ValueError: a NUL in the name)
        return None
    return entry / FOLDER / f"{_key(args)}.json"


def _key(args: argparse.Namespace) -> str:
    import hashlib

    from ..model.code_stamp import stamp

    options = sorted((k, v) for k, v in vars(args).items() if k != "debug")
    settings = sorted((k, v) for k, v in os.environ.items() if k.startswith("TRACETUI_") or k in TERMINAL_ENV)
    python = [os.path.realpath(sys.executable), sys.prefix, sys.version]  # (python and python3: one interpreter)
    parts = [VERSION, stamp(), python, _installed(), options, settings, _terminal()]
    return hashlib.sha256(repr(parts).encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _installed() -> list[tuple[str, int]]:
    """The site-packages folders and their modification times: installing, upgrading or removing a package changes
    them."""
    import site

    folders = [*site.getsitepackages(), site.getusersitepackages()] if hasattr(site, "getsitepackages") else sys.path
    return [(folder, _mtime(folder)) for folder in folders]


def _mtime(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0


def _terminal() -> list[Any]:
    """What of the terminal the output depends on: each stream a terminal or not, its encoding, and the widths (the
    reports fit stdout's terminal, as shutil sizes it; the notes stderr's)."""
    import shutil

    from .output import stream_columns

    streams = (sys.stdout, sys.stderr)
    ttys = [_isatty(s) for s in streams]
    size = tuple(shutil.get_terminal_size()) if any(ttys) else None
    return [ttys, [getattr(s, "encoding", None) for s in streams], size, [stream_columns(s) for s in streams]]


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def play(record: Path | None) -> bool:
    """Write a kept output back, stdout and stderr in their order; False when there is none to (or it is not one)."""
    if record is None:
        return False
    import json

    try:
        kept = json.loads(record.read_bytes())
        if kept.get("version") != VERSION:
            return False
        writes = [(tag, text) for tag, text in kept["writes"] if tag in _STREAMS and isinstance(text, str)]
        if len(writes) != len(kept["writes"]):
            return False
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return False
    _touch(record)
    for tag, text in writes:
        stream = sys.stdout if tag == "out" else sys.stderr
        stream.write(text)
        if tag == "err":
            stream.flush()  # as tell() does
    return True


class _Recorded:
    """A stream whose writes pass through and are kept, in one list with the other stream's."""

    def __init__(self, inner: Any, tag: str, writes: list[tuple[str, str]]) -> None:
        self.inner, self._tag, self._writes = inner, tag, writes

    def write(self, text: str) -> int:
        written = self.inner.write(text)
        self._writes.append((self._tag, text))
        return written

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@contextmanager
def recording(record: Path | None) -> Iterator[list[tuple[str, str]]]:
    """While the block runs, what is written to stdout and stderr is kept too (nothing when record is None)."""
    writes: list[tuple[str, str]] = []
    if record is None:
        yield writes
        return
    before = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Recorded(before[0], "out", writes), _Recorded(before[1], "err", writes)
    try:
        yield writes
    finally:
        sys.stdout, sys.stderr = before


def keep(record: Path | None, writes: list[tuple[str, str]]) -> None:
    """Keep a successful run's output for the next (quietly nothing where the entry is gone or cannot be written)."""
    if record is None or sum(len(text) for _, text in writes) > MOST_BYTES:
        return
    import json
    from pathlib import Path

    from ..model.load.flight import private_file

    tmp = None
    try:
        record.parent.mkdir(exist_ok=True)  # not its parents: an entry the cache dropped meanwhile stays dropped
        if record.parent.is_symlink():  # the cache writes and prunes in its own folders only, never through a link
            return
        fd, tmp = private_file(record)
        with os.fdopen(fd, "wb") as f:
            f.write(json.dumps({"version": VERSION, "writes": writes}).encode("utf-8", "surrogatepass"))
        os.replace(tmp, record)
    except (OSError, ValueError):
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        return
    _drop_oldest(record.parent)


def _drop_oldest(folder: Path) -> None:
    """Remove the least recently used records beyond KEEP (only records: names of ours, plain files)."""
    try:
        records = [p for p in folder.iterdir() if _RECORD.match(p.name) and p.is_file() and not p.is_symlink()]
        records.sort(key=lambda p: p.stat().st_mtime_ns, reverse=True)
        for old in records[KEEP:]:
            old.unlink(missing_ok=True)
    except OSError:
        pass


def _touch(record: Path) -> None:
    try:
        os.utime(record)
    except OSError:
        pass
