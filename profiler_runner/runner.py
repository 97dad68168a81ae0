"""Run a capture: pick the device, profile with the series' schedule, write trace and table.

This package never imports tracetui's viewer or model: what it needs of them after a capture
(a table, the verdict, the viewer) comes in as a Reader from the command line.
"""

from __future__ import annotations

import gzip
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Protocol

from .errors import ProfileError


class Reader(Protocol):
    """What the runner asks of the trace viewer once a trace is written."""

    def table(self, trace: Path, sort: str, rows: int) -> str: ...
    def verdict(self, trace: Path) -> list[str]: ...
    def open(self, trace: Path) -> int: ...


TORCH_HINT = "torch is not installed; install it with: pip install 'tracetui[profile]' (or your own torch build)"


def import_torch():
    try:
        import torch
    except ImportError:
        raise ProfileError(TORCH_HINT) from None
    return torch


def pick_device(torch, asked: str | None) -> str:
    if asked == "cuda" and not torch.cuda.is_available():
        raise ProfileError("--device cuda: CUDA is not available on this machine (use --device cpu)")
    if asked:
        return asked
    if torch.cuda.is_available():
        return "cuda"
    print("tracetui: CUDA is not available; profiling on the CPU", file=sys.stderr)
    return "cpu"


def output_path(args, workload: str, tag: str) -> Path:
    out = Path(args.output) if args.output else Path("traces") / workload / f"{tag}.json"
    if out.exists() and not args.force:
        raise ProfileError(f"{out}: already exists (use --force to overwrite, or -o for another path)")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ProfileError(f"{out.parent}: cannot create the output folder ({exc.strerror})") from None
    if not os.access(out.parent, os.W_OK):
        raise ProfileError(f"{out.parent}: not writable")
    return out


def table_path(trace: Path) -> Path:
    name = trace.name
    for suffix in (".json.gz", ".json", ".gz"):
        if name.endswith(suffix):
            return trace.with_name(name[: -len(suffix)] + ".txt")
    return trace.with_name(name + ".txt")


def run_profile(args, reader: Reader) -> int:
    from .target import check_name, resolve

    check_name(args.workload)
    torch = import_torch()
    device = pick_device(torch, args.device)

    target = resolve(args, device)
    out = output_path(args, target.workload, target.tag)
    step = compile_step(torch, target) if args.compile else target.step
    if args.warmup:
        for _ in range(3):
            step()
        if device == "cuda":
            torch.cuda.synchronize()
    prof = capture(torch, step, target.label, device, args)
    write_trace(prof, out)
    note = write_table(prof, out, device, reader)
    print(f"tracetui: wrote {out} and {table_path(out)}" + (f" ({note})" if note else ""), file=sys.stderr)
    print("\n".join(reader.verdict(out)))
    return 0 if args.no_open else reader.open(out)


def compile_step(torch, target):
    if target.fn is None:
        compiled = torch.compile(target.step)
        return compiled
    compiled = torch.compile(target.fn)
    return lambda: compiled(*target.args)


def capture(torch, step, label: str, device: str, args):
    """The series' profiler call: schedule(wait=1, warmup=1, active=N), N+2 iterations."""
    from torch.profiler import ProfilerActivity, profile, record_function, schedule

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    sched = schedule(wait=1, warmup=1, active=args.steps, repeat=1)
    with profile(
        activities=activities,
        schedule=sched,
        record_shapes=args.record_shapes,
        with_stack=args.with_stack,
        profile_memory=args.profile_memory,
    ) as prof:
        for _ in range(args.steps + 2):
            with record_function(label):
                step()
            prof.step()
    return prof


def write_trace(prof, out: Path) -> None:
    """Export to a temp file in the same folder, then rename: no half file under the name."""
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp.json", dir=out.parent)
    os.close(fd)
    try:
        prof.export_chrome_trace(tmp)
        _public(tmp)
        if out.name.endswith(".gz"):
            with open(tmp, "rb") as src, gzip.open(tmp + ".gz", "wb", compresslevel=6) as dst:
                shutil.copyfileobj(src, dst)
            os.replace(tmp + ".gz", out)
        else:
            os.replace(tmp, out)
    finally:
        for leftover in (tmp, tmp + ".gz"):
            if os.path.exists(leftover):
                os.unlink(leftover)


def write_table(prof, out: Path, device: str, reader: Reader) -> str | None:
    """torch's key_averages table; if torch fails, the same table from tracetui's model."""
    sort = "cuda_time_total" if device == "cuda" else "cpu_time_total"
    note = None
    try:
        text = prof.key_averages().table(sort_by=sort, row_limit=15)
    except Exception as exc:  # noqa: BLE001 - torch 2.13 raises UnicodeDecodeError with with_stack
        header = f"# computed by tracetui from {out.name}: torch's key_averages() raised {type(exc).__name__}\n"
        text = header + reader.table(out, sort, 15) + "\n"
        note = f"torch's key_averages() failed ({type(exc).__name__}); the table was computed by tracetui"
    atomic_write_text(table_path(out), text)
    return note


def atomic_write_text(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    _public(tmp)
    os.replace(tmp, path)


def _public(path: str) -> None:
    """Give a temp file the mode a plain open() would have (mkstemp makes it 0600)."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)
