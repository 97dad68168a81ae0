"""What a load tells whoever watches it: a fraction done, or one of the waits before the decode starts."""

from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[float], None]
WAITING = -1.0  # progress(WAITING): another process writes this file's cache entry, and this load waits to read it
COMPILING = -2.0  # progress(COMPILING): numba compiles the native decoder (TRACETUI_DECODE=native) before the decode
