"""Small allocator snapshots built by hand, in the real one's structure (h200-gpt-train.pickle).

A Builder records what a caching allocator did (segments made, blocks allocated and freed, an OOM) as
torch's trace entries, in order, with frames as torch writes them (C++ innermost, then Python); snapshot()
gives the dict `torch.cuda.memory._snapshot()` would: the segments held at the end with their blocks (the
used ones at their rounded sizes, the gaps between them inactive) and the device's trace. Sizes and
addresses are given by the test: the builder never decides where a block goes.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field
from pathlib import Path

MB = 1 << 20
KB = 1 << 10
ALLOCATOR = [
    {"name": "torch::unwind::unwind()", "filename": "??", "line": 0},
    {"name": "torch::CapturedTraceback::gather(bool, bool, bool)", "filename": "??", "line": 0},
    {
        "name": "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(unsigned long, CUstream_st*)",
        "filename": "CUDACachingAllocator.cpp",
        "line": 0,
    },
]


def op(name: str) -> list[dict]:
    """The C++ frames of an aten op's allocation (at::_ops::NAME::call over the allocator)."""
    return [*ALLOCATOR, {"name": f"at::_ops::{name}::call(at::Tensor const&)", "filename": "??", "line": 0}]


def backward(node: str, inner: str = "mul_Tensor") -> list[dict]:
    """The C++ frames of an allocation in the autograd engine's thread (no Python frames)."""
    return [
        *op(inner),
        {"name": f"torch::autograd::generated::{node}::apply(std::vector<at::Tensor>&&)", "filename": "??", "line": 0},
        {
            "name": "torch::autograd::Engine::thread_main(std::shared_ptr<GraphTask> const&)",
            "filename": "??",
            "line": 0,
        },
    ]


def py(*frames: tuple[str, str, int]) -> list[dict]:
    """Python frames (function, file, line), innermost first."""
    return [{"name": n, "filename": f, "line": line} for n, f, line in frames]


def at(line: int, fn: str = "forward", file: str = "model.py", aten: str = "mm") -> list[dict]:
    """An allocation by aten op `aten` from user code at file:line in fn, under train.py's loop."""
    return op(aten) + py((fn, file, line), ("train_step", "train.py", 40), ("<module>", "train.py", 60))


@dataclass
class Builder:
    device: int = 0
    entries: list[dict] = field(default_factory=list)
    segments: dict[int, dict] = field(default_factory=dict)  # address -> segment held now
    live: dict[int, dict] = field(default_factory=dict)  # address -> the alloc entry alive there
    time_us: int = 1_700_000_000_000_000
    step_us: int = 10

    def clock(self, time_us: int) -> Builder:
        """The next entry at this time (a Unix time in µs), not step_us after the last one."""
        self.time_us = time_us - self.step_us
        return self

    def _entry(self, action: str, addr: int, size: int, frames: list[dict], stream: int, **more) -> dict:
        self.time_us += self.step_us
        e = {"action": action, "addr": addr, "size": size, "stream": stream, "time_us": self.time_us}
        e |= {"frames": frames, "compile_context": "N/A", "user_metadata": "", **more}
        self.entries.append(e)
        return e

    def segment(self, addr: int, size: int, stream: int = 0, record: bool = True, frames=None) -> Builder:
        """A segment the allocator holds (cudaMalloc'd in the history when record, else before it)."""
        self.segments[addr] = {"address": addr, "total_size": size, "stream": stream}
        if record:
            self._entry("segment_alloc", addr, size, frames or at(1), stream)
        return self

    def release(self, addr: int) -> Builder:
        seg = self.segments.pop(addr)
        self._entry("segment_free", addr, seg["total_size"], at(1, "empty_cache"), seg["stream"])
        return self

    def alloc(self, addr: int, size: int, frames: list[dict], stream: int = 0, record: bool = True) -> Builder:
        e = {"addr": addr, "size": size, "stream": stream, "frames": frames}
        if record:
            e = self._entry("alloc", addr, size, frames, stream)
        self.live[addr] = e
        return self

    def free(self, addr: int, frames: list[dict] | None = None, stream: int | None = None) -> Builder:
        """A free requested and completed (of an allocation seen, or made before the history)."""
        e = self.live.pop(addr, None)
        size = e["size"] if e else 0
        s = e["stream"] if e else (stream or 0)
        for action in ("free_requested", "free_completed"):
            self._entry(action, addr, size, frames or (e["frames"] if e else at(99, "gone")), s)
        return self

    def free_unseen(self, addr: int, size: int, stream: int = 0) -> Builder:
        """The free of an allocation made before the history began (its alloc is not in the trace)."""
        for action in ("free_requested", "free_completed"):
            self._entry(action, addr, size, at(77, "cleanup"), stream)
        return self

    def oom(self, size: int, device_free: int, frames: list[dict], stream: int = 0) -> Builder:
        self.time_us += self.step_us
        e = {"action": "oom", "size": size, "stream": stream, "time_us": self.time_us, "device_free": device_free}
        self.entries.append(e | {"frames": frames, "compile_context": "N/A", "user_metadata": ""})
        return self

    def snapshot(self, history: bool = True) -> dict:
        segments = [self._segment(s) for s in sorted(self.segments.values(), key=lambda s: s["address"])]
        traces: list[list[dict]] = [[] for _ in range(self.device)] + [list(self.entries) if history else []]
        return {
            "segments": segments,
            "device_traces": traces,
            "allocator_settings": {"expandable_segments": False},
            "external_annotations": [],
        }

    def _segment(self, seg: dict) -> dict:
        start, end = seg["address"], seg["address"] + seg["total_size"]
        blocks, addr = [], start
        for a in sorted(k for k in self.live if start <= k < end):
            e = self.live[a]
            if a > addr:
                blocks.append(
                    {"address": addr, "size": a - addr, "requested_size": 0, "state": "inactive", "frames": []}
                )
            size = max(-(-e["size"] // 512) * 512, 512)
            blocks.append(
                {
                    "address": a,
                    "size": size,
                    "requested_size": e["size"],
                    "state": "active_allocated",
                    "frames": e["frames"],
                }
            )
            addr = a + size
        if addr < end:
            blocks.append({"address": addr, "size": end - addr, "requested_size": 0, "state": "inactive", "frames": []})
        used = [b for b in blocks if b["state"] != "inactive"]
        return {
            "device": self.device,
            "address": start,
            "total_size": seg["total_size"],
            "allocated_size": sum(b["size"] for b in used),
            "active_size": sum(b["size"] for b in used),
            "requested_size": sum(b["requested_size"] for b in used),
            "stream": seg["stream"],
            "segment_type": "small" if seg["total_size"] == 2 * MB else "large",
            "segment_pool_id": (0, 0),
            "is_expandable": False,
            "frames": [],
            "blocks": blocks,
        }


def write(path: Path, snap: dict) -> Path:
    path.write_bytes(pickle.dumps(snap))
    return path


BASE = 0x7F00_0000_0000
SIDE_STREAM = 0x5555


def leak(steps: int = 3, line: int = 30) -> Builder:
    """A training loop that keeps 1 MB a step in a list (never freed) beside a 4 MB activation it frees."""
    b = Builder().segment(BASE, 20 * MB)
    for k in range(steps):
        b.alloc(BASE + k * MB, MB, at(line, "remember"))
        b.alloc(BASE + 8 * MB, 4 * MB, at(12)).free(BASE + 8 * MB)
    return b


def fragmented(oom: int = 6 * MB) -> Builder:
    """One 20 MB segment: five 4 MB blocks, the second and fourth freed (8 MB free in two 4 MB holes), then a
    request of oom bytes that fails with 2 MB free on the device (0: none)."""
    b = Builder().segment(BASE, 20 * MB)
    for k in range(5):
        b.alloc(BASE + 4 * k * MB, 4 * MB, at(20 + k))
    b.free(BASE + 4 * MB).free(BASE + 12 * MB)
    return b.oom(oom, 2 * MB, at(50, aten="empty")) if oom else b


def two_streams() -> Builder:
    """A side stream's segment full while the default stream's has 16 MB free: a request on the side stream fails."""
    b = Builder().segment(BASE, 20 * MB).segment(BASE + 32 * MB, 20 * MB, stream=SIDE_STREAM)
    b.alloc(BASE, 4 * MB, at(10))
    b.alloc(BASE + 32 * MB, 10 * MB, at(11), stream=SIDE_STREAM).alloc(
        BASE + 42 * MB, 10 * MB, at(12), stream=SIDE_STREAM
    )
    b.free_unseen(BASE + 8 * MB, MB)  # allocated before the history began
    b.alloc(BASE + 12 * MB, 2 * MB, backward("MmBackward0", "mm"))
    return b.oom(8 * MB, 0, at(13), stream=SIDE_STREAM)


def no_history() -> Builder:
    """Segments only: _record_memory_history was never called."""
    return Builder().segment(BASE, 20 * MB, record=False).alloc(BASE, 5 * MB, at(4), record=False)


BUILT = {  # the files of tests/data/snapshots/ (python tests/allocator_snapshots.py writes them)
    "leak.pickle": lambda: leak().snapshot(),
    "leak-more.pickle": lambda: leak(5, line=33).snapshot(),
    "fragmented-oom.pickle": lambda: fragmented().snapshot(),
    "two-streams.pickle": lambda: two_streams().snapshot(),
    "no-history.pickle": lambda: no_history().snapshot(history=False),
}


if __name__ == "__main__":
    folder = Path(__file__).resolve().parent / "data" / "snapshots"
    for name, make in BUILT.items():
        write(folder / name, make())
        print(folder / name)
