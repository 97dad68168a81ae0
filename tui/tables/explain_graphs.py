"""The notes of the CUDA/HIP graph explain rules (tui/model/analyses/explain/graphs.py), as templates."""

from __future__ import annotations

GRAPH_TEMPLATES = {
    "graph-launches": "{kernels:,} activities on the device ({share} of device time) replayed from {launches:,} graph launch(es): "
    "the CPU pays {per_kernel:.2f} of launch time per replayed activity, and {saved:,} launch calls were saved.",
    "graph-launches-eager": "An eager launch call here takes {eager:.2f} (the median).",
    "graph-empty": "No device activity carries the correlation id of {empty:,} graph launch(es): their records were "
    "lost (the activity buffer overflowed, or the window ended first); their replays are not counted.",
    "graph-input-copies": "Before the replays, {copies:,} calls of aten::_foreach_copy_ copied the inputs into the graphs' "
    "static buffers ({kernels:,} kernels, {copy_us} of GPU time, {share} of the device time of the copies and the "
    "replays together): CUDA graph trees (torch.compile mode='reduce-overhead') replay from fixed addresses, and copy "
    "every input that is not static first. Parameters and buffers are static already; for another input, keep one "
    "tensor and fill it in place each step, or mark it with torch._dynamo.mark_static_address, and its copy goes.",
    "graph-capture-in-window": "{captures:,} stream captures ran inside the profiled window: capturing records the "
    "launches without running them and is one-time setup, so it is not what a replay costs. Warm up and capture "
    "before the profiler's window (skip more steps in its schedule, or tracetui profile --warmup).",
    "graph-unmatched": "{left:,} of {replayed:,} replayed activities ({left_us}) did not match the capture "
    "{capture}: they stay under their graph launch, not credited to an op.",
    "graph-no-capture": "The {replayed:,} replayed activities ({left_us}) are credited to the op around the graph "
    "launch, not to the code that captured them. Pass the capture trace with --graph-capture PATH (vLLM writes it "
    "to capture_traces/), or record the capture inside the window to see them per op and source line.",
}
