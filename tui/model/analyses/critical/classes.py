"""The critical path's vocabulary: what bounds each stretch of it (HTA's classes), the kinds of its items, edge types.

An edge of the graph is one stretch of time with a reason: CPU work on a thread, device work on a stream, a
gap between two kernels, the wait from a launch call to its kernel's start, a thread waiting for the GPU or
for another thread. Its class says what bounds the path while it is on that edge; its kind says what the
path item is (an op, a runtime call, a kernel, a copy, a synchronize, a wait).
"""

from __future__ import annotations

import enum
import re

from ...cats import Cat

# the CPU side of a collective (gloo runs its collectives on the CPU; NCCL's CPU side launches and waits)
from ..comm_names import COLLECTIVE_CALL as COLLECTIVE_OP  # noqa: F401
from ..kernel_roles import role
from ..launches import BLOCKING_COPY  # noqa: F401 (one definition: a copy call that waits for its copy)


class Bound(enum.IntEnum):
    """What bounds a stretch of the path. The names are HTA's, plus memcpy, idle, and three of ours: the CPU's own
    time coming back from a wait on the device (sync), torch.compile compiling, and a CPU thread's time inside a
    collective call on a rank with peers (communication, "CPU in collectives": gloo runs the collective there, NCCL
    launches it, a blocking wait waits there for the other ranks; a wait on another rank itself is found by
    matching collectives across the ranks, critical/ranks.py)."""

    CPU = 0
    GPU_COMPUTE = 1
    GPU_COMMUNICATION = 2
    GPU_MEMCPY = 3
    LAUNCH_OVERHEAD = 4
    KERNEL_KERNEL_OVERHEAD = 5
    DATA_LOADING = 6
    IDLE = 7
    SYNC = 8
    COMPILING = 9
    COMMUNICATION = 10


CLASS_NAMES = {
    Bound.CPU: "cpu_bound",
    Bound.GPU_COMPUTE: "gpu_compute_bound",
    Bound.GPU_COMMUNICATION: "gpu_communication_bound",
    Bound.GPU_MEMCPY: "gpu_memcpy_bound",
    Bound.LAUNCH_OVERHEAD: "gpu_kernel_launch_overhead",
    Bound.KERNEL_KERNEL_OVERHEAD: "gpu_kernel_kernel_overhead",
    Bound.DATA_LOADING: "data_loading",
    Bound.IDLE: "idle",
    Bound.SYNC: "sync",
    Bound.COMPILING: "compiling",
    Bound.COMMUNICATION: "communication",
}
CLASSES = tuple(CLASS_NAMES[b] for b in Bound)  # the breakdown's keys, in this order
# What HTA's critical path calls the same stretch (hta/analyzers/critical_path_analysis.py, bound_by): a copy runs
# on a stream, so it is gpu_compute_bound there; the CPU's own work of every kind is cpu_bound; a wait on the device
# or an idle stretch is one of its dependency edges, which it leaves unclassed ("").
HTA_CLASS = {
    **{name: name for name in CLASSES},
    "gpu_memcpy_bound": "gpu_compute_bound",
    "data_loading": "cpu_bound",
    "compiling": "cpu_bound",
    "communication": "cpu_bound",
    "sync": "",
    "idle": "",
}


class Kind(enum.IntEnum):
    """What a path item is."""

    CPU_OP = 0
    RUNTIME = 1
    KERNEL = 2
    MEMCPY = 3
    MEMSET = 4
    SYNC = 5
    WAIT = 6


KIND_NAMES = {k: k.name.lower() for k in Kind}


class Edge(enum.IntEnum):
    """Where an edge comes from (its rule); the tie-break order when two preceding edges end at one instant."""

    IDLE = 0  # from the window's start to a lane's first point: nothing recorded explains the time
    LAUNCH = 1  # a launch call's start -> its device activity's start
    WAKE = 2  # a thread woken by another (the autograd engine's thread and the thread that called backward)
    SYNC = 3  # the device work a blocking call waited for -> the call's end
    WAIT = 4  # a kernel on another stream -> the kernel that waited for it (event wait, graph dependency)
    STREAM = 5  # the previous activity on a stream -> the next one's start
    DEVICE = 6  # a device activity's start -> its end
    CPU = 7  # consecutive points of one CPU thread


# Blocking calls, by runtime (CUDA runtime, driver, HIP). A device synchronize waits for every stream.
SYNC_DEVICE = re.compile(r"^(?:cuda|hip)DeviceSynchronize|^cuCtxSynchronize")
SYNC_STREAM = re.compile(r"^(?:cuda|hip|cu)StreamSynchronize")
SYNC_EVENT = re.compile(r"^(?:cuda|hip|cu)EventSynchronize")
STREAM_WAIT = re.compile(r"^(?:cuda|hip|cu)StreamWaitEvent")
EVENT_RECORD = re.compile(r"^(?:cuda|hip|cu)EventRecord")
DATA_LOADER = re.compile(r"DataLoader|dataloader|data_loader")
LAUNCH_CALL = re.compile(r"Launch|Memcpy|Memset", re.IGNORECASE)  # calls that put work on the device
# ops run by the autograd engine's own thread: evaluate_function since torch 1.10, the node's name before
ENGINE = re.compile(r"^autograd::engine::evaluate_function|^\w+Backward\d*$|^torch::autograd::AccumulateGrad$")

_DEVICE_KIND = {int(Cat.KERNEL): Kind.KERNEL, int(Cat.MEMCPY): Kind.MEMCPY, int(Cat.MEMSET): Kind.MEMSET}


def device_bound(name: str, cat: int) -> Bound:
    """The class of a device activity: copies, collectives (by the kernel's role), or compute."""
    if cat != int(Cat.KERNEL):
        return Bound.GPU_MEMCPY
    return Bound.GPU_COMMUNICATION if role(name) == "collective" else Bound.GPU_COMPUTE


def device_kind(cat: int) -> Kind:
    return _DEVICE_KIND.get(cat, Kind.KERNEL)


def is_blocking(name: str) -> bool:
    """A call that may block the CPU until device work ends (synchronizes and copies)."""
    return bool(SYNC_DEVICE.search(name) or SYNC_STREAM.search(name) or SYNC_EVENT.search(name))
