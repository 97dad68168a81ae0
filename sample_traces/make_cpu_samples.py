"""Regenerate the CPU sample captures in sample_traces/cpu/ (run from the repository root).

Each is `tracetui profile ... --device cpu` at the small CPU sizes, gzipped, with its table.
"""

from __future__ import annotations

import sys
from pathlib import Path

OUT = Path(__file__).parent / "cpu"
CAPTURES = {
    "matmul_add_64_cold_eager": ["matmul_add"],
    "matmul_add_64_warm_eager": ["matmul_add", "--warmup"],
    "matmul_add_64_warm_compiled": ["matmul_add", "--warmup", "--compile"],
    "matmul_add_512_warm_eager": ["matmul_add", "--warmup", "--size", "512", "--dtype", "fp32"],
    "linear_fwd": ["linear", "--warmup", "--record-shapes"],
    "mlp_fwd": ["mlp", "--warmup"],
    "attn_naive": ["attention", "--variant", "naive", "--warmup"],
    "attn_inplace": ["attention", "--variant", "inplace", "--warmup"],
    "attn_sdpa_math": ["attention", "--variant", "sdpa", "--backend", "math", "--warmup", "--with-stack"],
}


def main() -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from profiler_runner.capture_samples import run

    OUT.mkdir(exist_ok=True)
    for name, args in CAPTURES.items():
        reason = run(name, args, OUT, "cpu", steps=3)
        print(f"{name}: {reason or 'ok'}", flush=True)
        if reason:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
