"""How a command stops: Ctrl-C, SIGTERM and SIGHUP end it as an exit (130, 128 + the signal), its cleanup run, with
nothing on stderr wherever the signal lands.

A stop can land anywhere: in an import (numpy turns it into an ImportError), inside a compiled function (numba's
dispatcher hands it back as a SystemError, "returned a result with an exception set"), in Python's exit hooks. So
the stops this command received are recorded as they come (`watched`), and an exception raised after one stands
for it (`as_stop`), not for a bug of ours: a fresh-eyes run of 730 timed signals found "internal error", exit 1, and
tracebacks from each of those places.
"""

from __future__ import annotations

import _thread
import functools
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_RECEIVED: list[int] = []  # the exit codes of the stops received while the command runs (the first one counts)
_WATCHING: list[bool] = [False]  # whether watched() holds SIGINT's handler now


@contextmanager
def watched() -> Iterator[None]:
    """Record the stops received within (Ctrl-C where Python's own handler takes it: it still raises
    KeyboardInterrupt; SIGTERM and SIGHUP where `terminated_as_exit` takes them)."""
    _RECEIVED.clear()
    if threading.current_thread() is not threading.main_thread() or (
        signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return
    before = signal.signal(signal.SIGINT, _ctrl_c)
    hook, sys.unraisablehook = sys.unraisablehook, functools.partial(_unraisable, sys.unraisablehook)
    _WATCHING[0] = True
    try:
        yield
    finally:
        _WATCHING[0] = False
        signal.signal(signal.SIGINT, before)
        sys.unraisablehook = hook


def _unraisable(hook, unraisable) -> None:
    """A stop raised where Python cannot raise it (a weakref callback, a __del__: importlib's module locks, numpy's
    buffers) is printed as "Exception ignored in ..." with a traceback, and dropped: the command ran on to its end,
    exit 0 (a fresh-eyes run, 1 of 150 Ctrl-C). It is raised again in the main thread once it can land, and said
    nowhere; only while the command is still watched and its handler still ours: a signal sent again after
    watched() had given SIGTERM back to the system killed the command outright (-15, a semaphore leaked)."""
    stop = unraisable.exc_value
    if not isinstance(stop, (KeyboardInterrupt, SystemExit)) or not _RECEIVED:
        hook(unraisable)
        return
    signum = signal.SIGINT if _RECEIVED[0] == 130 else signal.Signals(_RECEIVED[0] - 128)
    threading.Timer(0.01, _again, (signum,)).start()


def _again(signum: signal.Signals) -> None:
    """Run the main thread's handler of signum there, as if it came again (nothing where the handler is the
    system's or ignored: interrupt_main's rule), while the command is still watched."""
    if _WATCHING[0]:
        _thread.interrupt_main(signum)


def _ctrl_c(signum: int, frame: object) -> None:
    _RECEIVED.append(130)
    raise KeyboardInterrupt


def received() -> int | None:
    """The exit code of the first stop received while the command ran (None: none was)."""
    return _RECEIVED[0] if _RECEIVED else None


def as_stop(exc: BaseException) -> BaseException | None:
    """The stop that exc stands for: a stop received while the command ran (whatever exception it came out as), or
    one in exc's chain of causes and contexts; None: exc is a failure of its own."""
    if _RECEIVED:
        return KeyboardInterrupt() if _RECEIVED[0] == 130 else SystemExit(_RECEIVED[0])
    from ..model.load.workers import stop_within

    return stop_within(exc)


def code_of(stop: BaseException) -> int:
    """The exit code of a stop (as_stop's)."""
    if isinstance(stop, SystemExit) and isinstance(stop.code, int):
        return stop.code
    return 130


@contextmanager
def terminated_as_exit(on: bool, program: bool = False) -> Iterator[None]:
    """A headless command ended by SIGTERM or SIGHUP (kill, a closed terminal) exits as Ctrl-C does, its cleanup run:
    its decode's workers stopped, its scratch files removed (they outlived it). Exit 128 + the signal's number."""
    if not on or threading.current_thread() is not threading.main_thread():
        yield
        return

    def end(signum: int, frame: object) -> None:
        _RECEIVED.append(128 + signum)
        raise SystemExit(128 + signum)

    from ..model.load.workers import STOPS

    wanted = [s for s in STOPS if s != signal.SIGINT]  # SIGTERM, SIGHUP: Ctrl-C is watched()'s
    before = {s: signal.signal(s, end) for s in wanted if signal.getsignal(s) == signal.SIG_DFL}  # (nohup's stays)
    try:
        yield
    except SystemExit:
        if _RECEIVED and program:
            now_if_threads_run(_RECEIVED[0])
        raise
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


def now_if_threads_run(code: int) -> None:
    """Exit with code at once when tracetui's threads still run: the command's cleanup has run (the exception came
    up through it), and an analysis computing side by side in a thread would otherwise be waited for at exit, for as
    long as it takes (a pathological trace's minutes, with the process deaf to kill). Only where main() is the
    program (argv from sys.argv: the `tracetui` command), never in a process that called main() itself (a test
    runner's threads are not ours to cut short)."""
    ours = [t for t in threading.enumerate() if t.name.startswith("tracetui-") and t.is_alive()]
    if ours:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)


def deaf_to_ctrl_c() -> None:
    """Stopped or done: another Ctrl-C (an impatient user, `timeout -s INT`'s second) must not land in Python's exit
    hooks, which print it as "Exception ignored in atexit callback" with a traceback. Only where main() is the
    program, as for now_if_threads_run; SIGTERM and SIGKILL still end it."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
