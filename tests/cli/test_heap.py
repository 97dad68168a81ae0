"""The command line's allocator settings (tui/process/heap.py): freed arrays stay in the heap while a command runs, the viewer
hands them back, numpy gives no huge-page advice, and a user's own settings win."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest
from conftest import ROOT

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="mallopt's settings are glibc's (Linux)",
)

SCRIPT = """
import os, sys
from tui.process.heap import for_big_arrays, give_back
if sys.argv[1] == "tuned":
    for_big_arrays()
import numpy as np
def rss():
    return int(next(line for line in open("/proc/self/status") if line.startswith("VmRSS")).split()[1]) // 1024
before = rss()
block = np.ones(24 << 17)  # 24 MiB, touched
del block
kept = rss()
give_back()
print(os.environ.get("NUMPY_MADVISE_HUGEPAGE"), kept - before, rss() - before)
"""


def _run(how: str, **env: str) -> tuple[str, int, int]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("MALLOC_", "NUMPY_MADVISE", "GLIBC_TUN"))}
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, how], env={**clean, **env}, cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return out[0], int(out[1]), int(out[2])


def test_freed_arrays_stay_until_given_back():
    hugepage, kept, after = _run("tuned")
    assert hugepage == "0"
    assert kept >= 20  # MiB still held after the array was freed: the next one is not faulted in again
    assert after < 8  # give_back returned them to the kernel


THREADED = """
import sys, threading
from tui.process.heap import for_big_arrays
for_big_arrays()
import numpy as np
def rss():
    return int(next(line for line in open("/proc/self/status") if line.startswith("VmRSS")).split()[1]) // 1024
def churn():
    block = np.ones(24 << 17)
    del block
before = rss()
for _ in range(4):  # each in a new thread: with one heap per thread, each would keep its own freed block
    t = threading.Thread(target=churn)
    t.start()
    t.join()
churn()
print(rss() - before)
"""


def test_threads_share_one_heap_so_kept_blocks_do_not_add_up():
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("MALLOC_", "NUMPY_MADVISE", "GLIBC_TUN"))}
    grown = subprocess.run(
        [sys.executable, "-c", THREADED], env=clean, cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert int(grown) < 40  # MiB: one 24 MiB block kept and reused, not one per thread


def test_untuned_process_returns_freed_arrays_at_once():
    hugepage, kept, _ = _run("plain")
    assert hugepage == "None" and kept < 8


def test_a_users_settings_win():
    hugepage, kept, _ = _run("tuned", NUMPY_MADVISE_HUGEPAGE="1", MALLOC_ARENA_MAX="2")
    assert hugepage == "1" and kept < 8
    assert _run("tuned", GLIBC_TUNABLES="glibc.malloc.arena_max=2")[1] < 8  # glibc's newer way of saying the same


BLAS = """
import os, sys
from tui.process.heap import for_big_arrays
if sys.argv[1] == "tuned":
    for_big_arrays()
import numpy as np
blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]["name"]
print(os.environ.get("OPENBLAS_NUM_THREADS"), len(os.listdir("/proc/self/task")), "openblas" in blas.lower())
"""


@pytest.mark.parametrize(("env", "said"), [({}, "1"), ({"OPENBLAS_NUM_THREADS": "2"}, "2")])
def test_no_blas_threads_unless_the_user_asks(env, said):
    """numpy's OpenBLAS would start a thread per core, whose spinning cost a cached summary a third of its CPU."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENBLAS_", "OMP_"))}
    out = subprocess.run(
        [sys.executable, "-c", BLAS, "tuned"],
        env={**clean, **env},
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert out[0] == said
    if out[2] == "True" and not env:
        assert out[1] == "1", "the main thread alone: OpenBLAS started none"
