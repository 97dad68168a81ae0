"""Every launch's times for SQL and the API (HTA's get_cuda_kernel_launch_stats): one row per launch (a graph
launch once, with its replay's first activity), its call and its activity by event id, with HTA's launch delay
beside tracetui's and HTA's outlier flags."""

from __future__ import annotations

import numpy as np

from ..analyses.queues import LATE_START_NS, SLOW_CALL_NS, launch_stats
from ..analyses.results import Results
from .tables import Relation

LAUNCH_STATS = {
    "launch_id": "the runtime call that launched it (cudaLaunchKernel, cuLaunchKernelEx, cudaGraphLaunch, ...): an events id",
    "activity_id": "the kernel, copy or set: an events id",
    "stream": "the stream's lane it ran on (GPU 0 stream 7)",
    "cpu_us": "the launch call's duration (HTA's cpu_duration)",
    "gpu_us": "the activity's duration (HTA's gpu_duration)",
    "delay_us": "the call's start to the activity's start (as launches.latency_us)",
    "hta_delay_us": "the call's end to the activity's start, 0 when negative (HTA's launch_delay)",
    "slow_call": f"cpu_us over {SLOW_CALL_NS / 1000:g} us (HTA's runtime_cutoff)",
    "late_start": f"hta_delay_us over {LATE_START_NS / 1000:g} us (HTA's launch_delay_cutoff)",
    "graph": "a graph launch: the activity is the first its replay ran (the replay's others are no launches)",
}


def launch_stats_relation(a: Results) -> Relation:
    """One row per launch, in its activity's start order."""
    s = launch_stats(a.trace, a.links.launcher)
    lanes = np.array([t.name for t in a.trace.tracks] or [""], dtype=object)
    cols = {
        "launch_id": s.launch,
        "activity_id": s.activity,
        "stream": lanes[a.trace.x.track[s.activity]] if len(s.activity) else np.zeros(0, object),
        "cpu_us": s.cpu_ns / 1000.0,
        "gpu_us": s.gpu_ns / 1000.0,
        "delay_us": s.delay_ns / 1000.0,
        "hta_delay_us": s.hta_delay_ns / 1000.0,
        "slow_call": s.cpu_ns > SLOW_CALL_NS,
        "late_start": s.hta_delay_ns > LATE_START_NS,
        "graph": a.graph_owner[s.activity] >= 0 if len(s.activity) else np.zeros(0, bool),
    }
    doc = "one row per launch (a graph launch once): its call's and its activity's duration, the delays, HTA's outliers"
    return Relation("launch_stats", doc, cols, LAUNCH_STATS)
