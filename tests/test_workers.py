"""The decode's worker processes (tui/model/load/workers.py): Ctrl-C is the parent's alone, a worker whose parent is
gone exits, and a headless command ended by SIGTERM exits as Ctrl-C does, its cleanup run (the helper's report on
issue 39's early workers: tracebacks from workers on Ctrl-C, workers left running after kill)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tui.model.load.workers import decode_pool, quiet_spawns

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_worker_ignores_ctrl_c():
    pool = decode_pool(1)
    try:
        with quiet_spawns():
            worker = pool.submit(os.getpid).result(timeout=60)
        os.kill(worker, signal.SIGINT)  # as the terminal sends it to the whole process group
        time.sleep(0.3)
        assert pool.submit(os.getpid).result(timeout=60) == worker  # still there, still working
    finally:
        pool.shutdown(wait=True)


def test_quiet_spawns_restores_this_process_handler():
    before = signal.getsignal(signal.SIGINT)
    with quiet_spawns():
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    assert signal.getsignal(signal.SIGINT) == before


PARENT = """
import os, sys
from tui.model.load.workers import decode_pool
pool = decode_pool(1)
print(pool.submit(os.getpid).result(timeout=60), flush=True)
os._exit(0)  # as if killed: no shutdown, the worker orphaned
"""


def test_a_worker_exits_when_its_parent_is_gone():
    out = subprocess.run([sys.executable, "-c", PARENT], capture_output=True, text=True, timeout=120, check=True)
    worker = int(out.stdout.split()[-1])
    for _ in range(100):
        if not _alive(worker):
            break
        time.sleep(0.05)
    assert not _alive(worker)


def test_sigterm_ends_a_headless_command_as_an_exit_with_its_cleanup():
    from tui.cli.commands import _terminated_as_exit

    before = signal.getsignal(signal.SIGTERM)
    cleaned = []
    with pytest.raises(SystemExit) as ended, _terminated_as_exit(True):
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # the handler raises in this thread at once
        finally:
            cleaned.append(True)
    assert ended.value.code == 128 + signal.SIGTERM and cleaned
    assert signal.getsignal(signal.SIGTERM) == before


def test_an_ignored_hangup_stays_ignored():
    from tui.cli.commands import _terminated_as_exit

    before = signal.signal(signal.SIGHUP, signal.SIG_IGN)  # as under nohup
    try:
        with _terminated_as_exit(True):
            assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, before)
