"""The traces an MCP client named, kept open between calls, and the paging of long tables."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tracetui import Snapshot, Trace

KEEP_OPEN = 4  # traces kept open between calls (the least recently used is closed first)


class Traces:
    """The traces the client named, kept open (by path, size and mtime) so a second call loads nothing."""

    def __init__(self, cache: bool) -> None:
        self.cache = cache
        self.open: OrderedDict[tuple, Any] = OrderedDict()  # traces and snapshots
        self.lock = threading.Lock()

    def get(self, path: str) -> Trace:
        import tracetui

        return self._kept(path, lambda: tracetui.load(path, cache=self.cache))

    def snapshot(self, path: str) -> Snapshot:
        """A memory snapshot, kept open as traces are."""
        import tracetui

        return self._kept(path, lambda: tracetui.snapshot(path, cache=self.cache))

    def _kept(self, path: str, opener: Callable[[], Any]) -> Any:
        from ...model.samples import resolve

        try:
            st = os.stat(resolve(path))  # demo:NAME: its shipped sample
        except OSError:
            return opener()  # raises the loader's one line (no such file, ...)
        key = (os.path.abspath(resolve(path)), st.st_size, st.st_mtime_ns)
        with self.lock:
            if key in self.open:
                self.open.move_to_end(key)
                return self.open[key]
        opened = opener()
        with self.lock:
            self.open[key] = opened
            while len(self.open) > KEEP_OPEN:
                self.open.popitem(last=False)
        return opened


def page(doc: dict, key: str, limit: int, offset: int) -> dict:
    """The document with doc[key] cut to limit rows from offset, and a page saying how many are left."""
    rows = doc[key]
    if limit < 1 or offset < 0:
        raise ValueError(f"limit must be 1 or more and offset 0 or more (got limit {limit}, offset {offset})")
    shown = rows[offset : offset + limit]
    left = max(len(rows) - offset - len(shown), 0)
    info = {"total": len(rows), "offset": offset, "returned": len(shown), "left": left}
    return {**doc, key: shown, "page": info | ({"next_offset": offset + len(shown)} if left else {})}
