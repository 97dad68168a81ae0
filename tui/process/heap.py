"""How this process's allocators serve the big, short-lived arrays of a first load: a choice of the command line's
(a process it owns), never of the model's, which a library user's process may import.

A first load of a big trace makes and frees hundreds of arrays of tens of MB (the nesting, the ops table). Two
defaults made each of them cost page faults out of proportion (the 1 GB tile, 2 cores, `benchmarks/RESULTS.md`,
issue 39: 2.3-2.6 s of system time in a first `summary`, 0.8-0.9 s with both changed):
- numpy asks the kernel for transparent huge pages for every array of 4 MB and more (madvise); where the kernel's
  THP defrag setting is `madvise` (Ubuntu's default), the first touch of such an array waits while the kernel
  compacts memory to find a huge page. NUMPY_MADVISE_HUGEPAGE=0 is numpy's own switch; a user's setting wins.
- glibc hands every freed block over its mmap threshold back to the kernel at once, so the next array of that size
  is faulted in again page by page. Here freed blocks up to 32 MiB stay in the heap while the command runs; the
  viewer hands them back (`give_back`) once its first analyses are done. One heap (arena) serves every thread:
  with one per thread, as glibc makes them, each kept its own freed blocks and the analyses' threads raised the
  peak (1.40 GB against 1.07-1.09 GB for the tile's first summary). A user's MALLOC_* (or GLIBC_TUNABLES
  glibc.malloc.*) settings win.
- numpy's OpenBLAS starts a thread per core when numpy is imported, and the idle thread spins: 0.1 CPU s of a
  cached `summary`'s 0.3 (the 1 GB tile, 2 cores; `benchmarks/RESULTS.md`, issue 55), on a machine others share.
  Nothing here multiplies matrices: OPENBLAS_NUM_THREADS=1, unless the user set it.
"""

from __future__ import annotations

import ctypes
import os
import sys

_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD, _M_ARENA_MAX = -1, -2, -3, -8
_KEEP = 1 << 30  # free heap kept before glibc trims it: past a first load's temporaries
_PAD = 64 << 20  # the heap grows by this much more than asked (address space; pages are touched only when used)
_MMAP = 32 << 20  # glibc's ceiling for the mmap threshold on 64-bit: blocks up to this come from the heap


def for_big_arrays() -> None:
    """Before numpy is imported: no huge-page advice for numpy's arrays, no BLAS threads, freed blocks kept for the
    next ones."""
    os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")  # read when numpy is imported (decode workers too)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # read when OpenBLAS loads, with numpy
    if any(key.startswith("MALLOC_") for key in os.environ) or "glibc.malloc." in os.environ.get("GLIBC_TUNABLES", ""):
        return
    libc = _glibc()
    if libc is not None:
        settings = ((_M_ARENA_MAX, 1), (_M_MMAP_THRESHOLD, _MMAP), (_M_TRIM_THRESHOLD, _KEEP), (_M_TOP_PAD, _PAD))
        for option, value in settings:
            libc.mallopt(option, value)


def give_back() -> None:
    """Hand the heap's free memory back to the kernel (after a burst of temporaries, in a process that stays)."""
    libc = _glibc()
    if libc is not None:
        libc.malloc_trim(0)


def _glibc() -> ctypes.CDLL | None:
    """The C library when it is glibc (mallopt's options are glibc's), else None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)
    except OSError:
        return None
    if not hasattr(libc, "gnu_get_libc_version"):  # musl and others: leave their allocator alone
        return None
    return libc
