"""Event categories: the closed enum every era's category strings map to, and its groups."""

from __future__ import annotations

import enum
from collections.abc import Iterable

import numpy as np


class Cat(enum.IntEnum):
    """Event categories, normalized across Kineto versions."""

    CPU_OP = 0
    USER_ANNOTATION = 1
    PYTHON = 2
    RUNTIME = 3
    KERNEL = 4
    MEMCPY = 5
    MEMSET = 6
    GPU_ANNOTATION = 7
    SYNC = 8
    OVERHEAD = 9
    TRACE = 10
    OTHER = 11
    INSTANT = 12


CAT_BY_NAME: dict[str, Cat] = {
    "cpu_op": Cat.CPU_OP,
    "operator": Cat.CPU_OP,
    "user_annotation": Cat.USER_ANNOTATION,
    "python_function": Cat.PYTHON,
    "python": Cat.PYTHON,
    "cuda_runtime": Cat.RUNTIME,
    "cuda_driver": Cat.RUNTIME,
    "runtime": Cat.RUNTIME,
    "mtia_runtime": Cat.RUNTIME,
    "hpu_op": Cat.RUNTIME,  # Kineto: "HPU host side runtime event"
    "xpu_runtime": Cat.RUNTIME,
    "xpu_driver": Cat.RUNTIME,
    "privateuse1_runtime": Cat.RUNTIME,
    "privateuse1_driver": Cat.RUNTIME,
    "kernel": Cat.KERNEL,  # also Intel XPU kernels (Kineto's XPUPTI plugin writes them as kernel)
    "mtia_ccp_events": Cat.KERNEL,  # MTIA on-device work
    "gpu_memcpy": Cat.MEMCPY,
    "memcpy": Cat.MEMCPY,
    "gpu_memset": Cat.MEMSET,
    "memset": Cat.MEMSET,
    "gpu_user_annotation": Cat.GPU_ANNOTATION,
    "cuda_sync": Cat.SYNC,
    "overhead": Cat.OVERHEAD,
    "trace": Cat.TRACE,
    "cpu_instant_event": Cat.INSTANT,
}

GPU_CATS = (Cat.KERNEL, Cat.MEMCPY, Cat.MEMSET, Cat.GPU_ANNOTATION, Cat.SYNC)
# GPU activity that occupies the device (the union of these is "GPU busy").
BUSY_CATS = (Cat.KERNEL, Cat.MEMCPY, Cat.MEMSET)
# Categories torch's key_averages treats as host (CPU device) events.
HOST_CATS = (Cat.CPU_OP, Cat.USER_ANNOTATION, Cat.PYTHON, Cat.RUNTIME)
LEGACY_FLOW_CATS = {"async": "ac2g", "async_cpu_to_gpu": "ac2g", "forward_backward": "fwdbwd"}


def normalize_cat(cat: str) -> Cat:
    """Map a raw category string (any era) to the closed enum."""
    return CAT_BY_NAME.get(cat.lower(), Cat.OTHER)


def of_cats(cat: np.ndarray, cats: Iterable[int]) -> np.ndarray:
    """Per event: is its category one of these? (equalities or'ed together: a fifth of np.isin's time on the int8
    column, which a first summary of 3.3 M events asked about 30 times)"""
    out = np.zeros(cat.shape, bool)
    for c in cats:
        out |= cat == int(c)
    return out
