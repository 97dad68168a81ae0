"""The traces an MCP client named, kept open between calls and loaded once however many calls ask, and the paging
of long tables."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...model.load.flight import SingleFlight

if TYPE_CHECKING:
    import anyio

    from tracetui import Snapshot, Trace

    from .turns import Turns

KEEP_OPEN = 4  # traces kept open between calls (the least recently used is closed first)
Key = tuple[str, tuple]  # a trace as it is now: its absolute path and the identity of each file in it
IDENTITY_DEPTH = 2  # a folder's files are looked at this deep (a folder of captures, each a folder of ranks)
IDENTITY_FILES = 10_000  # and at most this many


@dataclass
class _Loading:
    """A load under way for the calls that wait on it: done once it ended, with its error if it failed."""

    done: anyio.Event
    error: Exception | None = field(default=None)


class Traces:
    """The traces the client named, kept open (by path and each file's identity) so a second call loads nothing.

    Calls that name a trace while it loads wait for that one load: on the event loop (ready(), which holds no
    worker while it waits) or in a worker (get())."""

    def __init__(self, cache: bool) -> None:
        self.cache = cache
        self.open: OrderedDict[Key, Any] = OrderedDict()  # traces and memory snapshots
        self.lock = threading.Lock()
        self._flight: SingleFlight[Any] = SingleFlight()
        self._loading: dict[Key, _Loading] = {}  # only touched on the event loop

    def get(self, path: str) -> Trace:
        """The open trace, or load it (once, whichever threads ask meanwhile); TraceError when it cannot be read."""
        import tracetui

        return self._kept(path, lambda: tracetui.load(path, cache=self.cache))

    def snapshot(self, path: str) -> Snapshot:
        """A memory snapshot, kept open and loaded once as traces are."""
        import tracetui

        return self._kept(path, lambda: tracetui.snapshot(path, cache=self.cache))

    def named(self, path: str) -> Any:
        """What a path names, opened and kept: a memory snapshot, or a trace."""
        from ...model.snapshot.read import is_snapshot

        return self.snapshot(path) if is_snapshot(path) else self.get(path)

    def _kept(self, path: str, opener: Callable[[], Any]) -> Any:
        key = _key(path)
        if key is None:
            return opener()  # raises the loader's one line (no such file, ...)
        kept = self._opened(key)
        return kept if kept is not None else self._flight.do(key, lambda: self._load(key, opener))

    async def ready(self, path: str, turns: Turns) -> None:
        """Have the trace open before a call on it takes a worker: the first call to name it loads it in a worker
        (when its turn comes), the calls that name it meanwhile wait without one. Raises the load's error."""
        import anyio

        key = _key(path)
        while key is not None and self._opened(key) is None:
            loading = self._loading.get(key)
            if loading is not None:
                await loading.done.wait()
                if loading.error is not None:
                    raise loading.error
                continue
            loading = self._loading[key] = _Loading(anyio.Event())
            try:
                await turns.run(("open", path), lambda: self.named(path))
            except Exception as exc:
                loading.error = exc
                raise
            finally:
                del self._loading[key]
                loading.done.set()
            return

    def _opened(self, key: Key) -> Any:
        with self.lock:
            trace = self.open.get(key)
            if trace is not None:
                self.open.move_to_end(key)
            return trace

    def _load(self, key: Key, opener: Callable[[], Any]) -> Any:
        opened = opener()
        with self.lock:
            self.open[key] = opened
            while len(self.open) > KEEP_OPEN:
                self.open.popitem(last=False)
        return opened


def _key(path: str) -> Key | None:
    """The trace as it is now (None: it cannot be read, and loading it says why); demo:NAME is its shipped sample."""
    from ...model.samples import resolve

    try:
        real = resolve(path)
        os.stat(real)
    except (OSError, ValueError):
        return None
    return (os.path.abspath(real), tuple(_identities(str(real), IDENTITY_DEPTH, [IDENTITY_FILES])))


def _identities(path: str, depth: int, left: list[int]) -> list[tuple]:
    """Each file's identity (name, inode, size, mtime, ctime: any write moves the ctime), a folder's files too
    down to `depth`: a rank file rewritten in place in a folder whose own stat did not change is a new key."""
    try:
        st = os.stat(path)
    except OSError:
        return [(path,)]
    found = [(path, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)]
    left[0] -= 1
    if depth > 0 and os.path.isdir(path):
        try:
            names = sorted(os.listdir(path))
        except OSError:
            return found
        for name in names:
            if left[0] <= 0:
                break
            found += _identities(os.path.join(path, name), depth - 1, left)
    return found


def page(doc: dict, key: str, limit: int, offset: int) -> dict:
    """The document with doc[key] cut to limit rows from offset, and a page saying how many are left."""
    rows = doc[key]
    if limit < 1 or offset < 0:
        raise ValueError(f"limit must be 1 or more and offset 0 or more (got limit {limit}, offset {offset})")
    shown = rows[offset : offset + limit]
    left = max(len(rows) - offset - len(shown), 0)
    info = {"total": len(rows), "offset": offset, "returned": len(shown), "left": left}
    return {**doc, key: shown, "page": info | ({"next_offset": offset + len(shown)} if left else {})}
