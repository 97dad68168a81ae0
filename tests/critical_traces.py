"""Small traces whose critical path is known by hand, for the critical path tests (times in us)."""

from __future__ import annotations

from pathlib import Path

from conftest import X, write_trace

MAIN, ENGINE = 1, 2  # CPU thread ids


def step(n: int, ts: float, dur: float, tid: int = MAIN) -> dict:
    return X(f"ProfilerStep#{n}", ts, dur, cat="user_annotation", tid=tid)


def op(name: str, ts: float, dur: float, tid: int = MAIN) -> dict:
    return X(name, ts, dur, tid=tid)


def call(name: str, ts: float, dur: float, corr: int, tid: int = MAIN) -> dict:
    """A runtime call (launch, synchronize, ...) with its correlation id."""
    return X(name, ts, dur, cat="cuda_runtime", tid=tid, correlation=corr)


def kernel(name: str, ts: float, dur: float, corr: int, stream: int = 7, cat: str = "kernel") -> dict:
    return X(name, ts, dur, cat=cat, pid=0, tid=stream, correlation=corr, stream=stream, device=0)


def launched(name: str, launch_ts: float, launch_dur: float, ts: float, dur: float, corr: int, stream: int = 7):
    """A cudaLaunchKernel and its kernel."""
    return [call("cudaLaunchKernel", launch_ts, launch_dur, corr), kernel(name, ts, dur, corr, stream)]


def serial_cpu(tmp: Path) -> Path:
    """Step [0,100]: A [10,40], B [50,90] with C [60,70] inside: all CPU, 100 us."""
    events = [step(1, 0, 100), op("A", 10, 30), op("B", 50, 40), op("C", 60, 10)]
    return write_trace(tmp / "serial.json", events)


def gpu_bound(tmp: Path, record: bool = False) -> Path:
    """Three kernels back to back, then a device synchronize: cpu 10, launch 7, GPU 138 of 155 us."""
    events = [step(1, 0, 155)]
    events += launched("K1", 5, 3, 12, 38, corr=1)
    events += launched("K2", 15, 3, 50, 40, corr=2)
    events += launched("K3", 25, 3, 90, 60, corr=3)
    events += [call("cudaDeviceSynchronize", 35, 117, corr=4)]
    if record:
        events += [X("Context Sync", 36, 116, cat="cuda_sync", pid=0, tid=-1, correlation=4, stream=-1, device=0)]
    return write_trace(tmp / ("gpu_bound_rec.json" if record else "gpu_bound.json"), events)


def launch_bound(tmp: Path) -> Path:
    """Five launches 10 us apart, each an 8 us call, kernels of 0.5 us 9 us after the launch starts: the step's CPU
    ends at 48, its last kernel at 49.5. Path: CPU 40, launch delay 9, GPU 0.5."""
    events = [step(1, 0, 48)]
    for i in range(5):
        events += launched(f"tiny{i}", 10 * i, 8, 10 * i + 9, 0.5, corr=i + 1)
    return write_trace(tmp / "launch_bound.json", events)


def sync_middle(tmp: Path) -> Path:
    """A stream synchronize waits for an 80 us kernel mid-step, then 80 us of CPU: cpu 110, launch 10, GPU 80."""
    events = [step(1, 0, 200)]
    events += launched("K1", 10, 5, 20, 80, corr=1)
    events += [call("cudaStreamSynchronize", 20, 82, corr=2), op("X", 110, 80)]
    return write_trace(tmp / "sync_middle.json", events)


def event_wait(tmp: Path, record: bool = False) -> Path:
    """K2 on stream 8 waits (cudaStreamWaitEvent) for K1 on stream 7: cpu 10, launch 10, GPU 130, gap 1."""
    events = [step(1, 0, 60)]
    events += launched("K1", 10, 5, 20, 100, corr=1, stream=7)
    events += [call("cudaEventRecord", 30, 2, corr=2), call("cudaStreamWaitEvent", 35, 2, corr=3)]
    events += launched("K2", 40, 5, 121, 30, corr=4, stream=8)
    if record:
        wait = X("Stream Wait Event", 36, 1, cat="cuda_sync", pid=0, tid=8, correlation=3, stream=8, device=0)
        wait["args"].update({"wait_on_stream": 7, "wait_on_cuda_event_record_corr_id": 2})
        events.append(wait)
    return write_trace(tmp / ("event_wait_rec.json" if record else "event_wait.json"), events)


def graph_replay(tmp: Path) -> Path:
    """A graph launch replays G1-G3 on stream 7 and G4 on stream 8 after G2: cpu 10, launch 15, GPU 10+14+38,
    gaps 1+2: 90 us."""
    events = [step(1, 0, 30), call("cudaGraphLaunch", 10, 10, corr=5)]
    events += [kernel("G1", 25, 10, 5), kernel("G2", 36, 14, 5), kernel("G3", 51, 29, 5)]
    events += [kernel("G4", 52, 38, 5, stream=8)]
    return write_trace(tmp / "graph.json", events)


def backward(tmp: Path) -> Path:
    """The main thread waits in ## backward ## while the autograd engine's thread works: 300 us, all CPU."""
    events = [step(1, 0, 300), X("## backward ##", 50, 240, cat="user_annotation"), op("aten::ones_like", 52, 18)]
    events += [op("autograd::engine::evaluate_function: MulBackward0", 80, 70, tid=ENGINE)]
    events += [op("autograd::engine::evaluate_function: AddBackward0", 160, 120, tid=ENGINE)]
    return write_trace(tmp / "backward.json", events)


def records_lost(tmp: Path) -> Path:
    """Launch calls and a synchronize, but no device records: the path is CPU only."""
    events = [step(1, 0, 100), call("cudaLaunchKernel", 10, 5, corr=1), call("cudaDeviceSynchronize", 20, 70, corr=2)]
    return write_trace(tmp / "lost.json", events)


def frame(name: str, ts: float, dur: float, tid: int = MAIN) -> dict:
    return X(name, ts, dur, cat="python_function", tid=tid)


def python_held(tmp: Path) -> Path:
    """No steps: Python frames hold the whole window on the main thread (spawn_main) and on a thread that only waits
    (_bootstrap ... wait), both cut at 1000 when the profiler stopped. The main thread runs an op that launches a
    800 us kernel [25, 825], then the profiler's exit synchronizes [50, 828] and disables the profiler. Path: CPU
    15 + 20 (op, launch; the rest of the frames), launch delay 10, GPU 800, back from the sync 3, CPU 172."""
    events = [frame("multiprocessing/spawn.py(122): spawn_main", 0, 1000), op("aten::mm", 10, 20)]
    events += [call("cudaLaunchKernel", 15, 5, corr=1), kernel("gemm", 25, 800, corr=1)]
    events += [frame("torch/autograd/profiler.py(419): __exit__", 40, 960)]
    events += [call("cudaDeviceSynchronize", 50, 778, corr=2)]
    events += [frame("<built-in method _disable_profiler of PyCapsule object>", 900, 80)]
    events += [
        frame("threading.py(1030): _bootstrap", 0, 1000, tid=ENGINE),
        frame("threading.py(359): wait", 1, 999, tid=ENGINE),
    ]
    return write_trace(tmp / "python_held.json", events)


def overlapped(tmp: Path) -> Path:
    """A replay whose kernels overlap on their stream (programmatic dependent launch): K2 starts while K1 still runs.
    Path: CPU 10, launch 5, GPU 20 + 30, no gap."""
    events = [step(1, 0, 20), call("cudaGraphLaunch", 10, 5, corr=1)]
    events += [kernel("K1", 15, 22, 1), kernel("K2", 35, 30, 1)]
    return write_trace(tmp / "overlapped.json", events)


def side_stream_unlinked(tmp: Path) -> Path:
    """No launches recorded (a GPU-side capture): copies on stream 0 queue behind a collective on stream 4 with no
    event recorded. Stream 0: C1 [0, 10], C2 [8030, 8040]; stream 4: an NCCL kernel [5, 8012]. The copies' gap
    [10, 8030] is the collective's time but for its last 18 us, when the GPU ran nothing."""
    events = [kernel("Memcpy DtoD (Device -> Device)", 0, 10, 1, stream=0, cat="gpu_memcpy")]
    events += [kernel("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", 5, 8007, 2, stream=4)]
    events += [kernel("Memcpy DtoD (Device -> Device)", 8030, 10, 3, stream=0, cat="gpu_memcpy")]
    return write_trace(tmp / "side_unlinked.json", events)


def allreduce(tmp: Path, world_size: int) -> Path:
    """A step of 200 us whose CPU sits 150 us inside c10d::allreduce_ (NCCL's CPU side), at a given world size."""
    events = [step(1, 0, 200), op("c10d::allreduce_", 20, 150), op("record_param_comms", 25, 140)]
    info = {"rank": 0, "world_size": world_size, "backend": "nccl"}
    return write_trace(tmp / f"allreduce_{world_size}.json", events, distributedInfo=info)


def sync_other_device(tmp: Path) -> Path:
    """hipDeviceSynchronize [30, 7205] waits for a 7.18 ms kernel on GPU 3 [25, 7208] that no recorded call
    launched and whose clock ends it 3 us after the call returned; a kernel the thread launched on GPU 2 [20, 60]
    ended long before. Path: CPU 10 + 95, launch delay 10 (K2's), GPU 40 + 7145 (the long kernel's, not a 7 ms
    return from the wait)."""
    events = [step(1, 0, 7300), call("hipLaunchKernel", 10, 5, corr=1), call("hipDeviceSynchronize", 30, 7175, corr=2)]
    events += [X("K2", 20, 40, cat="kernel", pid=2, tid=0, correlation=1, stream=0, device=2)]
    events += [X("long", 25, 7183, cat="kernel", pid=3, tid=0, correlation=99, stream=0, device=3)]
    return write_trace(tmp / "sync_other.json", events)


def moe_spin(tmp: Path) -> Path:
    """An MoE layer's dispatch: aten::mm launches the routing kernel (counts) [20, 700]; dispatch(F), an autograd
    Function that launches nothing, spins on host-mapped memory [30, 705] until the GPU writes the counts, 5 us
    after the kernel ends; then aten::add launches a small kernel. Path: CPU 10, launch 10, GPU 680 (the wait is
    the kernel's), back from the wait 5, CPU 95 + the add's: 800 us."""
    events = [step(1, 0, 800), op("aten::mm", 5, 20), op("dispatch(F)", 30, 675)]
    events += launched("routing_counts_kernel", 10, 5, 20, 680, corr=1)
    events += [op("aten::add", 710, 20), *launched("add_kernel", 715, 5, 730, 30, corr=2)]
    return write_trace(tmp / "moe_spin.json", events)


def replayed_step(tmp: Path) -> Path:
    """A manual torch.cuda.CUDAGraph replayed 4 times a step: each cudaGraphLaunch (5 us) replays two kernels of
    30 us on stream 7; launches 2-4 queue behind the running replays (their first kernel starts as the one
    before ends)."""
    events = [step(1, 0, 120)]
    for i in range(4):
        ts = 10 + 10 * i
        events += [op("torch/cuda/graphs.py(137): replay", ts, 8), call("cudaGraphLaunch", ts + 1, 5, corr=i + 1)]
        events += [kernel(f"gemm{i}", 20 + 60 * i, 30, i + 1), kernel(f"add{i}", 50 + 60 * i, 30, i + 1)]
    return write_trace(tmp / "replayed_step.json", events)
