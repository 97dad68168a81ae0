"""The notes of the roofline explain rules (tui/model/analyses/explain/roofline.py), as templates."""

from __future__ import annotations

ROOFLINE_TEMPLATES = {
    "roofline-gemm": "{op} {shapes:.70} ({calls:,} calls, {time}) runs at {tflops:.3g}: {pct:.3g}% of the {dtype} "
    "{unit} roof of the {gpu} ({peak:,.4g}).",
    "roofline-gemm-compute": "It is compute-bound (intensity {intensity:,.0f} FLOP/byte, above the ridge at "
    "{ridge:,.0f}): the remaining gap is the kernel's own efficiency (tile shapes, waves, clocks).",
    "roofline-gemm-memory": "At {intensity:,.1f} FLOP/byte it sits below the ridge ({ridge:,.0f}): memory-bound, "
    "moving {gbps:,.0f} GB/s, {bw_pct:.3g}% of the {bw:,.0f} GB/s bandwidth. Bigger shapes (more rows per call) "
    "raise its intensity.",
    "roofline-gemm-latency": "At {intensity:,.1f} FLOP/byte it sits below the ridge ({ridge:,.0f}), so bandwidth is "
    "its roof, yet it moves {gbps:,.0f} GB/s, {bw_pct:.3g}% of the {bw:,.0f} GB/s: far below both roofs, held back "
    "not by the bandwidth but by too little work per call to fill the GPU (latency). Bigger shapes (more rows per "
    "call) or fewer, batched calls raise it.",
    "roofline-memory": "{rows} elementwise, reduction and norm op shapes ({calls:,} calls, {time}: {ops}) "
    "{rows:is|are} memory-bound: {rows:it moves|they move} {bytes:size} at {bw_pct:.3g}% of the {bw:,.0f} GB/s bandwidth on average, doing almost "
    "no arithmetic per byte. Each reads its inputs from memory and writes its output back; fusing them "
    "(torch.compile, or a fused kernel) keeps the intermediates on chip and saves that traffic.",
    "roofline-memory-compiled": "{rows} elementwise, reduction and norm op shapes ({calls:,} calls, {time}: {ops}) "
    "{rows:is|are} memory-bound: {rows:it moves|they move} {mb:,.1f} MB at {bw_pct:.3g}% of the {bw:,.0f} GB/s bandwidth on average, doing "
    "almost no arithmetic per byte. The run is compiled, yet these ran as eager ops, outside its compiled graphs "
    "(graph breaks, or code torch.compile does not wrap; torch._dynamo.explain lists the breaks): compiled too, "
    "they would be fused, their intermediates kept on chip.",
    "roofline-fp32-gemm": "{rows} fp32 GEMM shape(s) ({calls:,} calls, {time}; the most: {top} {top_shapes:.60}) {rows:runs|run} at "
    "{tflops:.3g} against an fp32 roof of {fp32:.3g}; the {tc} tensor-core roof is {ratio} higher ({tc_peak:,.4g}).",
    "roofline-fp32-gemm-matrix": "{rows} fp32 GEMM shape(s) ({calls:,} calls, {time}; the most: {top} "
    "{top_shapes:.60}) {rows:runs|run} at {tflops:.3g} on the matrix cores' fp32 rate ({fp32:.3g}); their {tc} rate is {ratio} "
    "higher ({tc_peak:,.4g}).",
    "roofline-fp32-gemm-bf16": "Compute in bf16 (torch.autocast) to use it.",
    "roofline-tiny-gemm": "{rows} GEMM shape(s) with M <= {m} ({calls:,} calls, {time}) {rows:runs|run} far below both roofs (at "
    "most {best:.3g}% of their roof; {example:.80} at {example_tflops:.3g}, {example_pct:.3g}%):",
    "roofline-tiny-gemm-launch": "too little work per call to fill the GPU, so launch overhead and latency bound them.",
    "roofline-tiny-gemm-long": "too few rows per call to keep the GPU's SMs busy; at {per_call} a call, launching them is "
    "not the cost.",
    "roofline-tiny-gemm-batch": "Batch them (more rows per GEMM, fewer calls).",
    "roofline-tiny-gemm-graph": "A CUDA graph takes their launch overhead off the CPU.",
    "roofline-tiny-gemm-graph-more": "The run replays part of its work from CUDA graphs already: capturing these "
    "GEMMs too takes their launch overhead off the CPU.",
}
