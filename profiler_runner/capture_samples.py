"""Capture the series' workloads on a GPU into sample_traces/cuda-<gpu>/ and check their lessons.

Run once on the GPU machine:  python -m profiler_runner.capture_samples
  then the CUDA-only tests, their log kept beside the captures:
      python -m pytest -q tests/model/test_ops_vs_torch.py tests/cli/test_profile.py -k cuda 2>&1 | tee sample_traces/cuda-<gpu>/pytest-cuda.log
Test it on the CPU first:     python -m profiler_runner.capture_samples --device cpu --only matmul_add_64 --out /tmp/x
Each table beside a capture is torch's, with no Python-frame rows on any torch (runner.key_averages), so
tests/model/test_ops_h200.py can hold `tracetui ops` to it; a newer torch's captures go in a folder of their own.

Each capture is `tracetui profile ... --steps 2 --no-open`, gzipped, with its table beside it;
only one uses --with-stack (stacks make traces large); shapes are recorded in all. The compiled ones
include torch.compile's reduce-overhead (CUDA graphs) and max-autotune modes, warmed up before the
window. Afterwards CHECKS.md records what tracetui sees in them: the verdicts of the small and the
big matmul_add, the cold first step, and aten::mm + aten::add becoming aten::addmm under torch.compile.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

SDPA_BACKENDS = ("auto", "math", "flash", "efficient", "cudnn")


def captures() -> dict[str, list[str]]:
    """Name -> `tracetui profile` arguments."""
    out: dict[str, list[str]] = {}
    for size in (64, 4096):
        for warm in (False, True):
            for compiled in (False, True):
                name = f"matmul_add_{size}_{'warm' if warm else 'cold'}_{'compiled' if compiled else 'eager'}"
                out[name] = ["matmul_add", "--size", str(size)] + ["--warmup"] * warm + ["--compile"] * compiled
    out["matmul_add_64_warm_eager_stack"] = [
        "matmul_add",
        "--size",
        "64",
        "--warmup",
        "--with-stack",
        "--record-shapes",
    ]
    out["linear_fwd"] = ["linear", "--warmup", "--record-shapes"]
    out["mlp_fwd_eager"] = ["mlp", "--warmup"]
    out["mlp_fwd_compiled"] = ["mlp", "--warmup", "--compile"]
    for mode in ("reduce-overhead", "max-autotune"):  # warm-up before the window is implied by the mode
        slug = mode.replace("-", "_")
        out[f"matmul_add_4096_warm_compiled_{slug}"] = ["matmul_add", "--size", "4096", "--compile-mode", mode]
        out[f"mlp_fwd_compiled_{slug}"] = ["mlp", "--compile-mode", mode]
    out["attn_naive"] = ["attention", "--variant", "naive", "--warmup"]
    out["attn_inplace"] = ["attention", "--variant", "inplace", "--warmup"]
    for backend in SDPA_BACKENDS:
        out[f"attn_sdpa_{backend}"] = ["attention", "--variant", "sdpa", "--backend", backend, "--warmup"]
    return out


def run(name: str, args: list[str], out: Path, device: str, steps: int = 2) -> str | None:
    """Capture one; None on success, else the one-line reason it was skipped."""
    target = ["--device", device, "--steps", str(steps), "--no-open", "--force", "-o", str(out / f"{name}.json.gz")]
    cmd = [sys.executable, "-m", "tui", "profile", *args, *target]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        lines = [line for line in proc.stderr.splitlines() if line.startswith("tracetui: error:")]
        return lines[-1] if lines else f"exit {proc.returncode}"
    return None


def tracetui_json(*args: str) -> dict:
    """Run a headless tracetui command on a trace and parse its JSON (this package never imports tui)."""
    cmd = [sys.executable, "-m", "tui", *args, "--format", "json"]
    return json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)


def check(out: Path) -> list[str]:
    """What tracetui sees in the captures, one line each."""
    lines = []
    for path in sorted(out.glob("*.json.gz")):
        s = tracetui_json("summary", str(path))
        names = {r["name"] for r in tracetui_json("ops", str(path))["rows"]}
        fused = "aten::addmm" in names and "aten::mm" not in names
        steps = ", ".join(f"{st['dur_us']:,.0f}" for st in s["steps"])
        busy = f" (GPU busy {s['gpu_utilization']:.0%})" if s["kernels"] else " (CPU only)"
        lines.append(
            f"- {path.name}: {s['verdict']}{busy}; steps us: {steps}; "
            f"{'addmm (fused)' if fused else 'mm+add' if 'aten::mm' in names else ''}"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    p.add_argument("--out", type=Path, help="default: sample_traces/cuda-<gpu name>/")
    p.add_argument("--only", help="capture only the names starting with this")
    args = p.parse_args(argv)
    out = args.out or Path("sample_traces") / f"cuda-{_gpu_name()}"
    out.mkdir(parents=True, exist_ok=True)
    skipped = []
    for name, profile_args in captures().items():
        if args.only and not name.startswith(args.only):
            continue
        reason = run(name, profile_args, out, args.device)
        print(f"{name}: {reason or 'ok'}", flush=True)
        if reason:
            skipped.append(f"- {name}: skipped ({reason})")
    report = ["# What tracetui sees in these captures", "", *check(out), *([""] + skipped if skipped else [])]
    (out / "CHECKS.md").write_text("\n".join(report) + "\n")
    print("\n".join(report))
    return 0


def _gpu_name() -> str:
    try:
        import torch

        name = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"
    except ImportError:
        name = "none"
    return name.lower().replace("nvidia", "").strip().replace(" ", "-") or "gpu"


if __name__ == "__main__":
    sys.exit(main())
