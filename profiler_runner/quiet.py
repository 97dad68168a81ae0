"""Hide torch's `USDT:` lines (profiler_start, profiler_stop) from stderr; everything else passes through.

Kineto writes them from C++ straight to file descriptor 2, so the filter works at that level:
fd 2 is pointed at a pipe for the profiler's window, and a thread copies the pipe's lines to the
real stderr, leaving out those that start with `USDT:`. The redirection spans the whole profiler
block (not each prof.step()), so it costs the profiled steps nothing.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

NOISE = b"USDT:"
JOIN_S = 0.5  # how long to wait for the pipe's end when the profiler is done


@contextmanager
def quiet_usdt(fd: int = 2) -> Iterator[None]:
    """Filter the USDT lines written to `fd` while the block runs (a no-op where fd cannot be redirected)."""
    try:
        sys.stderr.flush()
        saved = os.dup(fd)
        read_end, write_end = os.pipe()
        os.dup2(write_end, fd)
        os.close(write_end)
    except (OSError, ValueError, AttributeError):
        yield
        return
    reader = threading.Thread(target=_copy, args=(read_end, saved), name="tracetui-usdt-filter", daemon=True)
    reader.start()
    try:
        yield
    finally:
        try:
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        os.dup2(saved, fd)  # closes the pipe's last write end: the reader sees the end
        reader.join(timeout=JOIN_S)
        if not reader.is_alive():  # else a child process (a compile worker) still holds the pipe: the reader
            os.close(saved)  # goes on passing its lines through, and closes nothing it still writes to


def _copy(read_end: int, out: int) -> None:
    """Copy lines from the pipe to out, without the noise; a last line without a newline is passed too."""
    pending = b""
    with os.fdopen(read_end, "rb", buffering=0) as pipe:
        while block := pipe.read(65536):
            pending += block
            *lines, pending = pending.split(b"\n")
            _write(out, b"".join(line + b"\n" for line in lines if not line.startswith(NOISE)))
    if pending and not pending.startswith(NOISE):
        _write(out, pending)


def _write(out: int, data: bytes) -> None:
    while data:
        try:
            data = data[os.write(out, data) :]
        except OSError:
            return
