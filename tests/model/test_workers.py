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

from tui.model.load import workers
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


def test_quiet_spawns_restores_this_process_handlers_and_mask():
    before = {stop: signal.getsignal(stop) for stop in workers.STOPS}
    with quiet_spawns():
        assert set(workers.STOPS) <= signal.pthread_sigmask(signal.SIG_BLOCK, [])
    assert {stop: signal.getsignal(stop) for stop in workers.STOPS} == before
    assert not set(workers.STOPS) & signal.pthread_sigmask(signal.SIG_BLOCK, [])


def _signals_of_this_process() -> dict[str, int]:
    with open("/proc/self/status") as f:
        return {k: int(v, 16) for k, v in (line.split(":") for line in f) if k in ("SigBlk", "SigIgn")}


def test_a_worker_spawned_with_the_stops_held_ignores_ctrl_c_and_takes_kills():
    pool = worker_pool(1)
    try:
        with quiet_spawns():
            status = pool.submit(_signals_of_this_process).result(timeout=60)
    finally:
        pool.shutdown(wait=True)
    bits = {stop: 1 << (stop - 1) for stop in workers.STOPS}
    assert not any(status["SigBlk"] & bit for bit in bits.values())  # unblocked by its initializer
    assert status["SigIgn"] & bits[signal.SIGINT]  # Ctrl-C is the parent's
    assert not status["SigIgn"] & bits[signal.SIGTERM]  # a kill ends it (wind_down's terminate)


_STOP_IN_A_SPAWN = """
import os, signal, sys
from tui.model.load.workers import quiet_spawns, wind_down, worker_pool

if __name__ == "__main__":
    if sys.argv[1] == "term":
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(143))  # as terminated_as_exit
    pool = worker_pool(1)
    try:
        with quiet_spawns():
            os.kill(os.getpid(), getattr(signal, "SIG" + sys.argv[1].upper()))  # as it lands in the spawn below
            worker = pool.submit(os.getpid)
        print("not stopped", flush=True)
    finally:
        print("spawned", worker.result(timeout=60) > 0, flush=True)
        wind_down(pool)
"""


@pytest.mark.parametrize("how, code", [("int", -signal.SIGINT), ("term", 143)])
def test_a_stop_during_a_spawn_is_raised_once_it_is_done(tmp_path, how, code):
    # a Ctrl-C there was lost (SIGINT ignored while spawning: the command ran to its end); a SIGTERM's exit in the
    # middle of the spawn left the child printing "EOFError: Ran out of input"
    script = tmp_path / "stop_in_spawn.py"
    script.write_text(_STOP_IN_A_SPAWN)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(script), how], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == code, done.stderr
    assert "not stopped" not in done.stdout and "spawned True" in done.stdout
    assert "EOFError" not in done.stderr and "Process SpawnProcess" not in done.stderr
    if how == "int":
        assert done.stderr.rstrip().endswith("KeyboardInterrupt")  # raised at the block's end, in this process


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
    from tui.cli.stops import terminated_as_exit

    before = signal.getsignal(signal.SIGTERM)
    cleaned = []
    with pytest.raises(SystemExit) as ended, terminated_as_exit(True):
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # the handler raises in this thread at once
        finally:
            cleaned.append(True)
    assert ended.value.code == 128 + signal.SIGTERM and cleaned
    assert signal.getsignal(signal.SIGTERM) == before


_STILL_RUNNING = """
import os, signal, sys, threading, time
from tui.cli import commands

HOW = sys.argv[1]

def a_command_whose_pass_runs_on(run, args):
    threading.Thread(target=threading.Event().wait, name="tracetui-pass_0").start()  # an analysis still computing
    if HOW == "kill":
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(60)
    raise KeyboardInterrupt  # Ctrl-C

commands.run_command = a_command_whose_pass_runs_on
sys.argv = ["tracetui", "summary", "any.json"]
sys.exit(commands.main())  # as the `tracetui` command runs it (argv None: the program)
"""


@pytest.mark.parametrize(("how", "code"), [("kill", 128 + signal.SIGTERM), ("ctrl-c", 130)])
def test_a_command_ended_while_an_analysis_thread_runs_exits_at_once(how, code):
    """kill or Ctrl-C while an analysis computes side by side in a thread: the command's cleanup runs, then it exits
    without waiting for that thread (Python joins such threads at exit: a pathological trace's minutes, deaf to
    kill). The thread here never ends, so a process that waits for it times out."""
    done = subprocess.run(
        [sys.executable, "-c", _STILL_RUNNING, how], cwd=ROOT, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == code, done.stderr


_CTRL_C_AT_EXIT = """
import atexit, os, signal, sys, time
from tui.cli import commands

def a_command_stopped_by_ctrl_c(run, args):
    if how == "finished":
        print("done", flush=True)
        return 0
    raise KeyboardInterrupt

def the_second_ctrl_c():  # lands while Python's exit hooks run (a pool's, joining its manager thread)
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(0.2)

atexit.register(the_second_ctrl_c)
commands.run_command = a_command_stopped_by_ctrl_c
how = sys.argv[1]
sys.argv = ["tracetui", "summary", "any.json"]
sys.exit(commands.main())
"""


@pytest.mark.parametrize("how, code", [("stopped", 130), ("finished", 0)])
def test_a_ctrl_c_during_the_exit_prints_nothing(how, code):
    """Stopped by Ctrl-C, the command exits 130; a second Ctrl-C landing in the exit hooks printed "Exception ignored
    in atexit callback" and a KeyboardInterrupt traceback (CI caught one such exit of `ranks`). So did one landing
    just after a command that finished (a fresh-eyes run: 3 of 20 Ctrl-C as the summary printed), exit 0."""
    argv = [sys.executable, "-c", _CTRL_C_AT_EXIT, how]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == code and done.stderr == "", done.stderr


_CTRL_C_IN_IMPORTS = """
import sys

class CtrlC:  # Ctrl-C lands while the command line's modules import (the first 50-100 ms of `tracetui`)
    def find_spec(self, name, path=None, target=None):
        if name == "tui.cli.commands":
            raise KeyboardInterrupt

sys.meta_path.insert(0, CtrlC())
sys.argv[0] = sys.argv[1]
from tui.cli import main
"""


@pytest.mark.parametrize(("program", "code"), [("/venv/bin/tracetui", 130), ("/home/me/notebook.py", -signal.SIGINT)])
def test_ctrl_c_while_the_command_imports_is_an_exit_not_a_traceback(program, code):
    """The `tracetui` program stopped before main() runs exits 130 quietly, as main() does (a fresh-eyes run sent
    SIGINT 50 ms after the start: a KeyboardInterrupt traceback through argparse's import); a program of someone
    else's importing tui.cli keeps its KeyboardInterrupt."""
    done = subprocess.run(
        [sys.executable, "-c", _CTRL_C_IN_IMPORTS, program], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == code
    assert ("KeyboardInterrupt" in done.stderr) == (code != 130), done.stderr


def test_a_ctrl_c_inside_a_compiled_function_is_a_stop_not_an_internal_error(monkeypatch, capsys):
    """numba's dispatcher hands a Ctrl-C that lands inside it back as SystemError("... returned a result with an
    exception set") from the KeyboardInterrupt: a fresh-eyes run's Ctrl-C during the nesting said "internal error",
    exit 1. What numba raises is made here as CPython makes it (_Py_CheckFunctionResult: the pending exception its
    cause)."""
    from tui.cli import commands

    def a_compiled_nesting_stopped(run, args):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as stop:
            raise SystemError("CPUDispatcher(<function nest_track>) returned a result with an exception set") from stop

    monkeypatch.setattr(commands, "run_command", a_compiled_nesting_stopped)
    assert commands.main(["summary", str(SAMPLES / "a100-train-control.json.gz")]) == 130
    assert capsys.readouterr().err == ""

    def a_bug(run, args):
        raise SystemError("a bug of ours, no stop behind it")

    monkeypatch.setattr(commands, "run_command", a_bug)
    assert commands.main(["summary", str(SAMPLES / "a100-train-control.json.gz")]) == 1
    assert "internal error: SystemError: a bug of ours" in capsys.readouterr().err


_TRACKER = """
import os, signal, sys, time
from multiprocessing import resource_tracker
from tui.model.load.workers import start_tracker

start_tracker()
tracker = resource_tracker._resource_tracker._pid
os.kill(tracker, signal.SIGHUP)  # a closed terminal sends it to the whole group
time.sleep(0.3)
print(os.waitpid(tracker, os.WNOHANG) == (0, 0))  # still running (the tracker is this process's child)
"""


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="POSIX signals")
def test_the_resource_tracker_outlives_a_hangup():
    """A closed terminal's SIGHUP to the group ended Python's resource tracker with the command: the command's
    pool then started another and printed "KeyError: '/mp-...'" tracebacks, or left its semaphores in /dev/shm
    (a fresh-eyes run: 12 of 20 hang-ups of a 100 MB first summary; 9 of 15 of `ranks`)."""
    done = subprocess.run([sys.executable, "-c", _TRACKER], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "True", done.stderr


_STOP_AS_ANOTHER_ERROR = """
import os, signal, sys
from tui.cli import commands

SIGNAL = getattr(signal, sys.argv[1])

def a_stop_landing_in_an_import(run, args):  # numpy's import turns it into an ImportError, the stop not chained
    stopped = False
    try:
        os.kill(os.getpid(), SIGNAL)
        for _ in range(10**8):  # the handler raises here
            pass
    except BaseException:
        stopped = True
    if stopped:
        raise ImportError('PyCapsule_Import could not import module "datetime"')

commands.run_command = a_stop_landing_in_an_import
sys.argv = ["tracetui", "summary", "any.json"]
sys.exit(commands.main())
"""


@pytest.mark.parametrize(("name", "code"), [("SIGINT", 130), ("SIGTERM", 128 + signal.SIGTERM)])
def test_a_stop_that_comes_out_as_another_error_is_still_a_quiet_stop(name, code):
    """A stop that lands in numpy's import comes out as an ImportError that does not name it (a fresh-eyes run: a
    SIGTERM 80 ms after the start printed numpy's whole import-failure text, exit 1). A stop received while the
    command ran is what any later exception stands for: its exit code, nothing on stderr."""
    done = subprocess.run(
        [sys.executable, "-c", _STOP_AS_ANOTHER_ERROR, name], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == code and done.stderr == "", done.stderr


_CTRL_C_IN_MAINS_OWN_IMPORT = """
import sys

class CtrlC:  # Ctrl-C lands while main() tunes the allocators (its first import, 60-80 ms after the start)
    def find_spec(self, name, path=None, target=None):
        if name == "tui.process.heap":
            raise KeyboardInterrupt

from tui.cli import commands
sys.meta_path.insert(0, CtrlC())
sys.argv = ["tracetui", "summary", "any.json"]
sys.exit(commands.main())
"""


def test_ctrl_c_in_mains_own_first_steps_is_a_quiet_stop():
    """main() imported and ran its set-up before its guard: a fresh-eyes run's Ctrl-C 60-83 ms after the start
    printed a KeyboardInterrupt traceback through heap.py's import (6 of 25)."""
    done = subprocess.run(
        [sys.executable, "-c", _CTRL_C_IN_MAINS_OWN_IMPORT], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 130 and done.stderr == "", done.stderr


def test_side_by_side_ending_with_the_process_waits_for_no_other_job():
    """Ctrl-C (or a kill turned into SystemExit) in the calling thread's job: side_by_side raises at once, the other
    jobs neither waited for nor, when not started, run."""
    import threading

    from tui.model.threads import side_by_side

    release, started = threading.Event(), threading.Event()

    def blocked() -> None:
        started.set()
        release.wait(30)

    def interrupted() -> None:
        started.wait(10)
        raise KeyboardInterrupt

    box: list[BaseException] = []

    def call() -> None:
        try:
            side_by_side(interrupted, blocked, blocked)
        except KeyboardInterrupt as exc:
            box.append(exc)

    os.environ["TRACETUI_THREADS"] = "2"
    try:
        caller = threading.Thread(target=call)
        caller.start()
        caller.join(10)
        assert not caller.is_alive() and box  # it did not wait for blocked()
    finally:
        del os.environ["TRACETUI_THREADS"]
        release.set()


def test_an_ignored_hangup_stays_ignored():
    from tui.cli.stops import terminated_as_exit

    before = signal.signal(signal.SIGHUP, signal.SIG_IGN)  # as under nohup
    try:
        with terminated_as_exit(True):
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
@pytest.mark.parametrize(
    ("signals", "code"), [((signal.SIGINT, signal.SIGINT), 130), ((signal.SIGTERM,), 128 + signal.SIGTERM)]
)
def test_two_ctrl_c_while_the_ranks_run_end_the_command_and_its_workers(signals, code):
    """GIVEN `tracetui ranks` with its workers busy WHEN two SIGINTs come (`timeout -s INT` sends two; so does an
    impatient user) THEN it exits 130 at once with nothing on stderr, and no worker is left. The second one used to
    land in the pool's shutdown wait, leaving the workers waiting for a job and the command waiting for them.
    SIGTERM (kill) the same, exit 143: it killed `ranks` outright, and Python's resource tracker said "There appear
    to be 5 leaked semaphore objects" on stderr (a fresh-eyes run: 34 of 39 kills)."""
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
    for k, signum in enumerate(signals):
        time.sleep(0.02 * k)
        proc.send_signal(signum)
    try:
        ended = proc.wait(timeout=30)
    finally:
        proc.kill()
    assert ended in (code, 0)  # (0: it had just finished)
    err = proc.stderr.read().decode() if proc.stderr is not None else ""
    assert "Traceback" not in err and "leaked" not in err, err
    for _ in range(100):
        if not any(_alive(w) for w in workers):
            break
        time.sleep(0.05)
    assert not any(_alive(w) for w in workers)


_STOP_IN_A_WIND_DOWN = """
import os, signal, threading, time
from tui.model.load.workers import quiet_spawns, wind_down, worker_pool

if __name__ == "__main__":
    pool = worker_pool(1)
    with quiet_spawns():
        worker = pool.submit(os.getpid).result(timeout=60)
    busy = pool.submit(time.sleep, 30)
    while not busy.running():  # handed to the worker (before, the wind-down could cancel it: nothing to wait for)
        time.sleep(0.01)
    manager = pool._executor_manager_thread
    threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT)).start()  # the second Ctrl-C, during the wait
    start = time.monotonic()
    try:
        wind_down(pool)
    except KeyboardInterrupt:
        print("stopped", round(time.monotonic() - start, 1), manager in threading.enumerate(), flush=True)
    try:
        os.kill(worker, 0)
        print("worker alive")
    except ProcessLookupError:
        print("worker gone")
"""


def test_a_stop_during_a_wind_down_ends_the_workers_and_then_the_manager(tmp_path):
    """GIVEN a pool whose worker is busy WHEN a second Ctrl-C comes during the wait for it THEN the worker is killed,
    and the interrupt goes on up only once the pool's manager thread has really ended. Python 3.11's join, cut by
    the interrupt, marked the running thread ended; the exit then closed the pool's queues under it and waited for
    a worker for ever (a fresh-eyes run: double Ctrl-C at a first load's start), or printed "OSError: [Errno 9] Bad
    file descriptor" (CI, at the exit of `ranks`)."""
    script = tmp_path / "stop_in_wind_down.py"
    script.write_text(_STOP_IN_A_WIND_DOWN)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    stopped, seconds, listed = done.stdout.splitlines()[0].split()
    assert stopped == "stopped" and float(seconds) < 15 and listed == "False"  # not cut at 30 s; no thread left
    assert done.stdout.splitlines()[1] == "worker gone"


def test_workers_started_ahead_and_dropped_at_the_exit_leave_no_manager_either():
    """The same race where a command ends before its load took the workers started ahead (an error, a Ctrl-C while
    it imports): they are shut down without a wait, and the exit came next."""
    from tui.model.load import parts

    pool = worker_pool(1)
    with quiet_spawns():
        pool.submit(os.getpid).result(timeout=60)
    manager = pool._executor_manager_thread
    parts._SPARE.append((1, pool))
    parts.drop_workers(exiting=True)
    assert manager is not None and not manager.is_alive()


def test_a_count_that_is_not_one_is_said_once_and_ignored(monkeypatch):
    """TRACETUI_DECODE_PROCS=abc (or -3, or 0) was ignored in silence, where TRACETUI_DECODE=nativ is said."""
    from tui.model.errors import said_once
    from tui.model.load.parts import PARALLEL_MIN_BYTES, worker_count
    from tui.model.threads import thread_count

    said_once.cache_clear()
    default = max(1, min(os.cpu_count() or 1, 8))
    monkeypatch.setenv("TRACETUI_DECODE_PROCS", "abc")
    with pytest.warns(RuntimeWarning, match=r"^tracetui: TRACETUI_DECODE_PROCS=abc is not a whole number of processes"):
        assert worker_count(PARALLEL_MIN_BYTES) == default
    monkeypatch.setenv("TRACETUI_THREADS", "-3")
    with pytest.warns(
        RuntimeWarning,
        match=rf"TRACETUI_THREADS=-3 is not a whole number of threads, 1 or more: the default, {default} \(",
    ):
        assert thread_count() == default
    monkeypatch.setenv("TRACETUI_DECODE_PROCS", "1")
    assert worker_count(PARALLEL_MIN_BYTES) == 1
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    monkeypatch.setenv("TRACETUI_DECODE_PROCS", "3")
    assert worker_count(1) == 3  # at any size
    monkeypatch.setenv("TRACETUI_DECODE_PROCS", "99999")  # was started, until the machine ran out of memory
    with pytest.warns(
        RuntimeWarning,
        match=r"TRACETUI_DECODE_PROCS=99999 is not a whole number of processes from 1 to 4 \(this machine's cores\): 4, the most",
    ):
        assert worker_count(1) == 4


_HALF_SENT = """
import os, sys, time
from concurrent.futures.process import BrokenProcessPool
from tui.model.load import workers

def half_sent():
    # as a worker killed while it writes a result bigger than the pipe holds: a whole header, part of the message
    import gc, struct
    from multiprocessing.queues import SimpleQueue
    queue = next(o for o in gc.get_objects() if isinstance(o, SimpleQueue))
    os.write(queue._writer.fileno(), struct.pack("!i", 1 << 20) + bytes(1000))
    os._exit(1)

if __name__ == "__main__":
    if sys.argv[1] == "unwatched":
        workers.watch = lambda pool: None
    pool = workers.worker_pool(1)
    future = pool.submit(half_sent)
    start = time.monotonic()
    try:
        future.result(timeout=30)
    except BrokenProcessPool:
        print("broken after", round(time.monotonic() - start, 1), flush=True)
    workers.wind_down(pool)
    print("wound down", flush=True)
"""


@pytest.mark.parametrize("how", ["watched", "unwatched"])
def test_a_worker_gone_half_way_through_its_result_does_not_hang_the_pool(tmp_path, how):
    # the pool's manager thread waits in recv for the rest of the message, for ever; a closed terminal did this to a
    # first load (its SIGHUP to the group, a worker sending its part), and the command hung at its exit
    script = tmp_path / "half_sent.py"
    script.write_text(_HALF_SENT)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        done = subprocess.run(
            [sys.executable, str(script), how],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60 if how == "watched" else 15,
        )
    except subprocess.TimeoutExpired:
        assert how == "unwatched", "the pool hung"
        return
    assert how == "watched", f"without the watch it should hang (the case is not reproduced): {done.stdout}"
    assert done.returncode == 0, done.stderr
    assert "broken after" in done.stdout and "wound down" in done.stdout
    assert float(done.stdout.split("broken after")[1].split()[0]) < workers.STUCK_S + workers.FREE_S + 5


def test_the_watch_holds_nothing_of_a_pool_once_it_is_shut_down():
    # its queues' semaphores live as long as they do: a command that ends with os._exit (a stop while an analysis
    # runs) while they lived left them to the resource tracker, "5 leaked semaphore objects" on stderr
    import gc
    import weakref

    pool = worker_pool(1)
    with quiet_spawns():
        assert pool.submit(int, "7").result(timeout=120) == 7
    results = weakref.ref(pool._result_queue)
    pool.shutdown(wait=True)
    del pool
    gc.collect()
    assert results() is None


_CTRL_C_IN_THE_CLEANUP = """
import os, shutil, signal, sys

import tui.model.load.parse as parse
import tui.model.load.parts as parts
import tui.model.load.source as source

if __name__ == "__main__":
    source.CHUNK_BYTES, parts.PARALLEL_MIN_BYTES = 64 << 10, 0  # (as the force_workers fixture)
    parts.os.cpu_count = lambda: 2
    real, decoded = shutil.rmtree, []

    def cut(path, *args, **kwargs):  # Ctrl-C lands inside the removal of the decode's scratch folder
        os.kill(os.getpid(), signal.SIGINT)
        real(path, *args, **kwargs)

    def counted(*args, **kwargs):
        decoded.append("again")
        return real_range(*args, **kwargs)

    real_range, parse.decode_range = parse.decode_range, counted
    shutil.rmtree = cut
    from tui.model.load.loader import load_trace
    try:
        load_trace(sys.argv[1], use_cache=False)
        print("not stopped", flush=True)
    except KeyboardInterrupt:
        print("stopped", flush=True)
    left = [n for n in os.listdir(os.environ["TRACETUI_CACHE_DIR"]) if n.startswith(".parts-")]
    print("decoded again" if decoded else "decoded once", "left", left, flush=True)
"""


def test_a_ctrl_c_in_the_decodes_cleanup_stops_the_load(tmp_path):
    """A fresh-eyes run: a Ctrl-C inside shutil.rmtree (after it closed a descriptor, which its own cleanup then
    closed again) came out as "OSError: Bad file descriptor", which the load took for "no worker processes here":
    the Ctrl-C was lost, the file decoded again in one process, and the scratch folder left in the cache."""
    import gzip

    trace = tmp_path / "trace.json"
    trace.write_bytes(gzip.decompress((SAMPLES / "h100-bert-small.json.gz").read_bytes()))
    script = tmp_path / "ctrl_c_in_cleanup.py"
    script.write_text(_CTRL_C_IN_THE_CLEANUP)
    (tmp_path / "cache").mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TRACETUI_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, str(script), str(trace)], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["stopped", "decoded once left []"], done.stdout + done.stderr


def test_a_stop_that_comes_out_as_an_oserror_is_not_taken_for_missing_workers(monkeypatch, force_workers, tmp_path):
    # shutil.rmtree cut by Ctrl-C right after closing a descriptor closes it again: OSError(EBADF), the KeyboardInterrupt
    # its context; the load took it for "no worker processes here" and decoded the whole file again, the stop lost
    import gzip

    import tui.model.load.parse as parse

    def cut(*args):
        try:
            raise KeyboardInterrupt
        finally:
            raise OSError(9, "Bad file descriptor")

    monkeypatch.setattr(parse, "decode_parallel", cut)
    trace = tmp_path / "trace.json"
    trace.write_bytes(gzip.decompress((SAMPLES / "h100-bert-small.json.gz").read_bytes()))
    from tui.model.load.loader import load_trace

    with pytest.raises(KeyboardInterrupt):
        load_trace(trace, use_cache=False)


_CTRL_C_IN_A_CALLBACK = """
import os, signal, sys, time, weakref
from tui.cli import commands

class Thing:
    pass

def a_command(run, args):
    thing = Thing()

    def gone(ref):  # a weakref callback (importlib's module locks have one): Ctrl-C lands in it
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000):
            pass

    ref = weakref.ref(thing, gone)
    del thing
    for _ in range(300):  # the command's work goes on
        time.sleep(0.01)
    print("finished", flush=True)
    return 0

commands.run_command = a_command
sys.argv = ["tracetui", "summary", "any.json"]
sys.exit(commands.main())
"""


def test_a_ctrl_c_landing_in_a_callback_still_stops_the_command():
    """A fresh-eyes run: a Ctrl-C that landed in importlib's module-lock callback printed "Exception ignored in:
    <function _get_module_lock.<locals>.cb>" with a traceback, and the command ran on to its end, exit 0."""
    done = subprocess.run(
        [sys.executable, "-c", _CTRL_C_IN_A_CALLBACK], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 130 and done.stderr == "" and "finished" not in done.stdout, done.stderr


_TERM_IN_A_CALLBACK_AT_THE_END = """
import os, signal, sys, weakref
from tui.cli import commands

class Thing:
    pass

def a_command(run, args):
    def gone(ref):  # SIGTERM's exit lands in a weakref callback, where Python prints it and drops it
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(1000):
            pass

    thing = Thing()
    ref = weakref.ref(thing, gone)
    del thing
    return 0  # and the command ends at once, before the stop is raised again

commands.run_command = a_command
sys.argv = ["tracetui", "summary", "any.json"]
sys.exit(commands.main())
"""


def test_a_dropped_stop_at_the_commands_end_is_its_exit_code_not_a_kill():
    """A fresh-eyes run: a SIGTERM dropped in a callback was sent again 10 ms later, after the command had given
    SIGTERM back to the system: killed outright (-15), "1 leaked semaphore". Now it is the command's exit code."""
    done = subprocess.run(
        [sys.executable, "-c", _TERM_IN_A_CALLBACK_AT_THE_END], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stderr) == (128 + signal.SIGTERM, ""), done.stderr


_TERM_THEN_CTRL_C = """
import os, signal, sys, threading, time
from tui.cli import commands

def a_command(run, args):
    def later():  # Ctrl-C while the stopped program waits for this (non-daemon) thread at its exit
        time.sleep(0.4)
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.3)

    threading.Thread(target=later, name="writer").start()
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(5)

commands.run_command = a_command
sys.argv = ["tracetui", "summary", "any.json"]
sys.exit(commands.main())
"""


def test_sigterm_then_ctrl_c_exits_with_the_first_stop_and_prints_nothing():
    """A fresh-eyes run: SIGTERM, then Ctrl-C 150 ms later printed "Exception ignored in: <module 'threading'> ...
    KeyboardInterrupt" (4 of 105), or ended -2: SIGTERM's exit left main() without making the program deaf to
    Ctrl-C, as Ctrl-C's own stop does."""
    done = subprocess.run(
        [sys.executable, "-c", _TERM_THEN_CTRL_C], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stderr) == (128 + signal.SIGTERM, ""), done.stderr


def test_a_stop_while_the_scratch_folder_is_made_leaves_no_folder(monkeypatch, isolated_cache):
    """A fresh-eyes run: a SIGTERM while the decode's scratch folder was being made (before the code that removes
    it took over) left an empty `.parts-*` folder in the cache (1 of 20 at a 100 MB load's 0.22 s)."""
    from tui.model.load import cachedir, spill
    from tui.model.load.cachedir import cache_root

    made = cachedir.own_tempdir

    def made_then_stopped(prefix, parent):
        folder = made(prefix, parent)
        os.kill(os.getpid(), signal.SIGINT)
        return folder

    monkeypatch.setattr(cachedir, "own_tempdir", made_then_stopped)
    with pytest.raises(KeyboardInterrupt):
        spill.scratch_folder(cache_root())
    assert not [p.name for p in cache_root().iterdir() if p.name.startswith(".parts-")]


def test_an_unzip_whose_scratch_file_cannot_be_opened_leaves_no_folder(monkeypatch, isolated_cache, tmp_path):
    """A gzipped trace unzipped without a cache entry moves to a scratch file past IN_MEMORY_BYTES; where that
    file cannot be opened it goes on in memory, and the folder made for it goes too (it was left, empty)."""
    import gzip

    from tui.model.load import source
    from tui.model.load.cachedir import cache_root

    def refused(self, partial, file=None):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(source, "IN_MEMORY_BYTES", 1 << 10)
    monkeypatch.setattr(source._Sink, "_to_file", refused)
    zipped = tmp_path / "t.json.gz"
    shutil.copy(SAMPLES / "h100-bert-small.json.gz", zipped)
    data, truncated, out = source.inflate(zipped, None)
    assert bytes(data[:1]) == b"{" and not truncated and out is None
    assert len(data) == len(gzip.decompress(zipped.read_bytes()))
    assert not [p.name for p in cache_root().iterdir() if p.name.startswith(".parts-")]
