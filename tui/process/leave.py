"""How a one-shot command's process ends once its output is written: its exit hooks run, then it exits at once,
without Python's teardown.

The teardown frees every module and object one by one, and numba's compiled code with them: 0.12 s for a process
that loaded the compiled scan, 0.22 s after a first `summary` of the 1 GB tile (2 cores, `benchmarks/RESULTS.md`,
round 23), all of it after the last byte of output, with nothing left to write. Only where nothing could miss it:
the command is the program (never a process that called main() itself, a test runner's), no profiler or tracer
reads the process after main() (`python -m cProfile` prints its table then), no thread of ours still runs and no
worker process is alive (Python's hooks would wait for them), and both streams flush. Elsewhere the process exits
as Python exits it.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading


def at_once(code: int) -> None:
    """Run the exit hooks and exit with code now, where nothing could miss the teardown (else return)."""
    if sys.getprofile() is not None or sys.gettrace() is not None:
        return
    if any(t is not threading.main_thread() and not t.daemon and t.is_alive() for t in threading.enumerate()):
        return
    children = sys.modules.get("multiprocessing")
    if children is not None and children.active_children():
        return
    atexit._run_exitfuncs()  # what Python runs at exit before its teardown (the resource tracker's, logging's)
    for stream in (sys.stdout, sys.stderr):
        if stream is None:  # closed when the program started (`>&-`)
            continue
        try:
            stream.flush()
        except (OSError, ValueError):
            return  # said as Python says it, at its exit
    os._exit(code)
