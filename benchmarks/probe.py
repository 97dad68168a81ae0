"""Run a command in a fresh process and measure its wall time and the peak RSS of its whole process tree."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Run:
    seconds: float
    peak_gb: float
    out: str
    cpu: float = 0.0  # user + system seconds of the whole tree: steadier than wall time on a shared machine


def children_cpu() -> float:
    """User + system seconds of every child process reaped so far (workers included, once reaped by theirs)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def tree_rss(proc: psutil.Process) -> int:
    """RSS of a process and all its children (workers included), 0 once it is gone."""
    try:
        procs = [proc, *proc.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0
    total = 0
    for p in procs:
        try:
            total += p.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total


def run(argv: list[str], env: dict | None = None, every_s: float = 0.02, cwd: Path | None = None) -> Run:
    """Wall seconds from start to exit, and the peak RSS of the tree sampled every 20 ms."""
    t0, cpu0 = time.perf_counter(), children_cpu()
    child = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env or os.environ.copy(), cwd=cwd
    )
    proc, peak, done = psutil.Process(child.pid), [0], threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], tree_rss(proc))
            time.sleep(every_s)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = child.communicate()
    seconds = time.perf_counter() - t0
    done.set()
    sampler.join()
    if child.returncode:
        raise SystemExit(f"{' '.join(argv)} failed ({child.returncode}): {err.strip()[-500:]}")
    return Run(seconds, peak[0] / 1e9, out, children_cpu() - cpu0)


def python(code: str, env: dict | None = None) -> Run:
    return run([sys.executable, "-c", code], env)


def tracetui(*args: str, env: dict | None = None) -> Run:
    return run([sys.executable, "-m", "tui", *args], env)


def environment(cache: Path) -> dict:
    """The probes' environment: their own cache, and bytecode written as on a user's machine (a sandbox that
    sets PYTHONDONTWRITEBYTECODE would otherwise compile every module of tracetui on every start). The decode path
    is msgspec unless TRACETUI_DECODE is set: by default (auto) a big trace in a fresh cache would start numba's
    compile in a process of its own beside the timed one (bench_floor.py's `--decode auto` marks it done first)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.setdefault("TRACETUI_DECODE", "msgspec")
    return {**env, "TRACETUI_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
