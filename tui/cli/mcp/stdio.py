"""The server's stdin and stdout as non-blocking pipes, read and written on the event loop itself.

The SDK's stdio transport reads and writes each line in a worker thread. While calls compute in the pool,
those threads wait for Python's GIL behind them (each hop between the loop and a thread waits its turn), so
answers finished early went out only when the last call ended: 60 calls answered together, the quickest
summary with the slowest critical path. Here the loop writes an answer the moment its call ends and reads a
request the moment it arrives, waiting (without a thread) only while the pipe is full or empty.

While serving, fd 0 reads /dev/null and fd 1 writes to stderr (as the SDK's transport does), so a stray print
or a child process never touches the protocol; both are put back afterwards.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

READ_BYTES = 1 << 16


@contextmanager
def claimed() -> Iterator[tuple[Lines, Writer]]:
    """The protocol's pipes (private copies of fd 0 and 1, non-blocking) while fd 0 and 1 point elsewhere."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    saved_in, saved_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    blocking = os.get_blocking(wire_in), os.get_blocking(wire_out)
    os.set_blocking(wire_in, False)
    os.set_blocking(wire_out, False)
    try:
        yield Lines(wire_in), Writer(wire_out)
    finally:
        os.set_blocking(wire_in, blocking[0])
        os.set_blocking(wire_out, blocking[1])
        for fd, saved in ((0, saved_in), (1, saved_out)):
            os.dup2(saved, fd)
            os.close(saved)
        os.close(wire_in)
        os.close(wire_out)


class Lines:
    """The lines of a non-blocking pipe, as `async for line in stdin` reads them (each with its newline)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buf = bytearray()
        self.ended = False

    def __aiter__(self) -> Lines:
        return self

    async def __anext__(self) -> str:
        import anyio

        while (cut := self.buf.find(b"\n")) < 0 and not self.ended:
            try:
                chunk = os.read(self.fd, READ_BYTES)
            except BlockingIOError:
                await anyio.wait_readable(self.fd)
                continue
            self.buf += chunk
            self.ended = not chunk
        if cut < 0 and not self.buf:
            raise StopAsyncIteration
        end = cut + 1 if cut >= 0 else len(self.buf)
        line = bytes(self.buf[:end])
        del self.buf[:end]
        return line.decode("utf-8", errors="replace")


class Writer:
    """Text written whole to a non-blocking pipe, waiting on the loop (not in a thread) while the pipe is full."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    async def write(self, text: str) -> None:
        import anyio

        data = memoryview(text.encode("utf-8"))
        while data:
            try:
                data = data[os.write(self.fd, data) :]
            except BlockingIOError:
                await anyio.wait_writable(self.fd)

    async def flush(self) -> None:
        """Nothing is buffered: each write went to the pipe."""
