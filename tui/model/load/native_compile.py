"""numba's compile of the scan and the nesting, run as a program of its own by native_warm.compile_behind: niced,
one at a time (native_warm.LOCK), the mark written ready or failed (native_warm.MARK) for the key it compiled."""

from __future__ import annotations

import os
import sys

from . import native_warm


def compile_here() -> int:
    """The compile itself: 0 when done (or another process compiles), 1 when numba failed (the mark says so)."""
    k, folder = native_warm.key(), native_warm.writable_root()
    if k is None or folder is None or not native_warm.take_lock(folder):
        return 0
    try:
        os.nice(10)
    except OSError:
        pass
    try:
        from .scanned import warm

        try:
            warm()
        except Exception:  # noqa: BLE001 - a numba that cannot compile it: the default stays msgspec, said by the mark
            native_warm.write_mark(folder, f"failed {k}")
            return 1
        native_warm.write_mark(folder, f"ready {k}")
        return 0
    finally:
        (folder / native_warm.LOCK).unlink(missing_ok=True)


if __name__ == "__main__":
    sys.exit(compile_here())
