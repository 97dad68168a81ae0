"""Small traces whose breakdowns are known by hand, one per class (times in us), for the breakdown, queue, copy and
export tests: a stream waiting on another, a host-starved stream, back-to-back kernels, copies, a collective over
compute."""

from __future__ import annotations

from pathlib import Path

from conftest import X, write_trace


def call(name: str, ts: float, dur: float, corr: int, tid: int = 1) -> dict:
    return X(name, ts, dur, cat="cuda_runtime", tid=tid, correlation=corr)


def on_device(name: str, ts: float, dur: float, corr: int, stream: int = 7, cat: str = "kernel", **args) -> dict:
    return X(name, ts, dur, cat=cat, pid=0, tid=stream, correlation=corr, stream=stream, device=0, **args)


def launched(
    name: str, at: float, ts: float, dur: float, corr: int, stream: int = 7, call_dur: float = 2
) -> list[dict]:
    """A cudaLaunchKernel at `at` and its kernel."""
    return [call("cudaLaunchKernel", at, call_dur, corr), on_device(name, ts, dur, corr, stream)]


def waits_on_stream(tmp: Path) -> Path:
    """Stream 7: A [10,20], then C, launched at 5 (queued), starts at 113, 3 us after B on stream 24 ([20,110])
    ends: a 93 us gap waiting on stream 24. The device: compute 105 of [10,118], idle 3."""
    events = [X("ProfilerStep#1", 0, 120, cat="user_annotation")]
    events += launched("A", 1, 10, 10, 1)
    events += launched("B", 3, 20, 90, 2, stream=24)
    events += launched("C", 5, 113, 5, 3)
    return write_trace(tmp / "waits.json", events)


def host_starved(tmp: Path) -> Path:
    """Three kernels of 10 us, each launched 20 us after the one before ended: two gaps of 30 us, host wait."""
    events = []
    for k in range(3):
        start = 10 + 40 * k
        events += launched(f"K{k}", start - 10, start, 10, k + 1)
    return write_trace(tmp / "starved.json", events)


def back_to_back(tmp: Path) -> Path:
    """Four kernels queued at once (launched at 0-3), each starting 2 us after the one before ends: 3 gaps of 2 us
    between kernels; then a fifth, queued too, that starts 50 us late with nothing else running: other."""
    events = []
    for k in range(4):
        events += launched(f"K{k}", k, 10 + 12 * k, 10, k + 1, call_dur=1)
    events += launched("K4", 4, 56 + 50, 10, 5, call_dur=1)
    return write_trace(tmp / "back_to_back.json", events)


def copies_and_compute(tmp: Path) -> Path:
    """A 4 MB pageable H2D copy [0,100] on stream 8 beside a kernel [50,150] on stream 7, a 1 KB pinned D2H copy
    [200,210] and a set [220,221]: copies alone 50 + 10 + 1, compute alone 50, both 50, idle 60 of [0,221]."""
    mb = 4 << 20
    events = [
        call("cudaMemcpyAsync", -5, 3, 1),
        on_device("Memcpy HtoD (Pageable -> Device)", 0, 100, 1, stream=8, cat="gpu_memcpy", bytes=mb),
        *launched("gemm", 40, 50, 100, 2),
        call("cudaMemcpyAsync", 190, 3, 3),
        on_device("Memcpy DtoH (Device -> Pinned)", 200, 10, 3, cat="gpu_memcpy", bytes=1024),
        call("cudaMemsetAsync", 215, 3, 4),
        on_device("Memset (Device)", 220, 1, 4, cat="gpu_memset", bytes=512),
    ]
    return write_trace(tmp / "copies.json", events)


def collective_over_compute(tmp: Path) -> Path:
    """ncclDevKernel_AllReduce [0,100] on stream 24, a GEMM [50,150] on stream 7: communication alone 50, both 50,
    compute alone 50, nothing idle."""
    events = launched("ncclDevKernel_AllReduce_Sum_f32_RING_LL", -10, 0, 100, 1, stream=24)
    events += launched("sm90_xmma_gemm_bf16", 40, 50, 100, 2)
    return write_trace(tmp / "collective.json", events)


def two_steps(tmp: Path) -> Path:
    """ProfilerStep#1 [0,100] launches K1 [20,60]; ProfilerStep#2 [100,200] launches K2 [150,170] and K3
    [180,250] (launched at 175, after K2 ended): step 2's window is [100,250]."""
    events = [X("ProfilerStep#1", 0, 100, cat="user_annotation"), X("ProfilerStep#2", 100, 100, cat="user_annotation")]
    events += launched("K1", 10, 20, 40, 1)
    events += launched("K2", 110, 150, 20, 2)
    events += launched("K3", 175, 180, 70, 3)
    return write_trace(tmp / "steps.json", events)


def tiny_pageable_copies(tmp: Path, n: int = 40) -> Path:
    """n copies of 4 KB to pageable memory, 25 us each, one every 40 us inside a 2 ms step: 0.16 GB/s, half the
    window."""
    events = [X("ProfilerStep#1", 0, 2000, cat="user_annotation")]
    for k in range(n):
        events.append(call("cudaMemcpyAsync", 10 + 40 * k, 30, 100 + k))
        name = "Memcpy DtoH (Device -> Pageable)"
        events.append(on_device(name, 12 + 40 * k, 25, 100 + k, cat="gpu_memcpy", bytes=4096))
    return write_trace(tmp / "tiny.json", events)
