"""The decode's worker processes (tui/model/load/workers.py): Ctrl-C is the parent's alone, a worker whose parent is
gone exits, and a headless command ended by SIGTERM exits as Ctrl-C does, its cleanup run (the helper's report on
issue 39's early workers: tracebacks from workers on Ctrl-C, workers left running after kill)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT, SAMPLES

from tui.model.load.workers import quiet_spawns, worker_pool

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_worker_ignores_ctrl_c():
    pool = worker_pool(1)
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
from tui.model.load.workers import worker_pool
pool = worker_pool(1)
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


def _decode_procs_and_pid() -> tuple[str | None, int]:
    return os.environ.get("TRACETUI_DECODE_PROCS"), os.getpid()


def test_the_ranks_pool_workers_decode_alone_and_ignore_ctrl_c_too():
    from tui.model.load.pool import spawn_pool

    with spawn_pool(1) as pool:
        with quiet_spawns():
            procs, worker = pool.submit(_decode_procs_and_pid).result(timeout=60)
        assert procs == "1"  # its setup ran: one process per rank's decode
        os.kill(worker, signal.SIGINT)
        time.sleep(0.3)
        assert pool.submit(_decode_procs_and_pid).result(timeout=60) == ("1", worker)


def _children(pid: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]


@pytest.mark.skipif(not Path("/proc").is_dir() or shutil.which("pgrep") is None, reason="needs pgrep and /proc")
def test_two_ctrl_c_while_the_ranks_run_end_the_command_and_its_workers():
    """GIVEN `tracetui ranks` with its workers busy WHEN two SIGINTs come (`timeout -s INT` sends two; so does an
    impatient user) THEN it exits 130 at once with nothing on stderr, and no worker is left. The second one used to
    land in the pool's shutdown wait, leaving the workers waiting for a job and the command waiting for them."""
    folder = SAMPLES / "hta-2rank"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tui", "ranks", str(folder), "--no-cache", "--workers", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    workers: list[int] = []
    for _ in range(600):  # the workers are spawned (two children besides the resource tracker), then busy
        workers = _children(proc.pid)
        if len(workers) >= 3 or proc.poll() is not None:
            break
        time.sleep(0.01)
    if proc.poll() is not None:
        pytest.skip("the command finished before its workers could be seen")
    time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    try:
        code = proc.wait(timeout=30)
    finally:
        proc.kill()
    assert code in (130, 0)  # (0: it had just finished)
    assert proc.stderr is not None and "Traceback" not in proc.stderr.read().decode()
    for _ in range(100):
        if not any(_alive(w) for w in workers):
            break
        time.sleep(0.05)
    assert not any(_alive(w) for w in workers)
