"""Run a capture: pick the device, profile with the series' schedule, write trace and table.

This package never imports tracetui's viewer or model: what it needs of them after a capture
(a table, the verdict, the viewer) comes in as a Reader from the command line.
"""

from __future__ import annotations

import copy
import gzip
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

from .errors import ProfileError
from .frames import clean_trace_file
from .quiet import quiet_usdt


class Reader(Protocol):
    """What the runner asks of the trace viewer once a trace is written."""

    def table(self, trace: Path, sort: str, rows: int) -> str: ...
    def verdict(self, trace: Path) -> list[str]: ...
    def open(self, trace: Path) -> int: ...
    def job(self, folder: Path) -> list[str]: ...


CHECKOUT_HINT = (
    "torch is not installed; from this checkout ({root}): pip install -e '.[profile]' 'torch==2.13.0' "
    "(pinned: the CPU build; an unpinned torch pulls a multi-GB CUDA build; on a GPU server install the torch "
    "built for its CUDA instead)"
)
OWN_TORCH_HINT = (
    "torch is not installed; tracetui profile runs your own torch: install the build for this machine "
    "(pytorch.org lists the pip command for each CUDA version, and the CPU-only one), then run it again"
)


def checkout_root() -> Path | None:
    """The source checkout this package runs from (its pyproject.toml names tracetui), or None when installed."""
    root = Path(__file__).resolve().parent.parent
    try:
        text = (root / "pyproject.toml").read_text("utf-8")
    except OSError:
        return None
    return root if 'name = "tracetui"' in text else None


def torch_hint() -> str:
    """How to get torch, for how tracetui was installed: a checkout, or a package (bring your own torch)."""
    root = checkout_root()
    return CHECKOUT_HINT.format(root=root) if root is not None else OWN_TORCH_HINT


def import_torch():
    try:
        import torch
    except ImportError:
        raise ProfileError(torch_hint()) from None
    return torch


def pick_device(torch, asked: str | None) -> tuple[str, str]:
    """The device, and a note to print once the request is known to be sound ('' when none)."""
    if asked == "cuda" and not torch.cuda.is_available():
        raise ProfileError("--device cuda: CUDA is not available on this machine (use --device cpu)")
    if asked:
        return asked, ""
    if torch.cuda.is_available():
        return "cuda", ""
    return "cpu", "tracetui: CUDA is not available; profiling on the CPU"


def output_path(args, workload: str, tag: str) -> tuple[Path, Path | None]:
    """Where to write, and the name that was taken when another was picked (never a refusal). Checked before the
    run (a folder that cannot be made fails at once), made only when there is a trace to write (make_folder)."""
    asked = Path(args.output) if args.output else Path("traces") / workload / f"{tag}.json"
    out = asked if args.force else free_name(asked)
    existing = next(p for p in (out.parent, *out.parent.parents) if p.exists() or p == Path(p.anchor or "."))
    if not existing.is_dir():
        raise ProfileError(f"{out.parent}: cannot create the output folder ({existing} is not a folder)")
    if not os.access(existing, os.W_OK):
        raise ProfileError(f"{out.parent}: not writable")
    return out, (asked if out != asked else None)


def make_folder(out: Path) -> None:
    """The output's folder, made once the capture succeeded (a failed run leaves no empty folder behind)."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ProfileError(f"{out.parent}: cannot create the output folder ({exc.strerror})") from None


def free_name(path: Path) -> Path:
    """path if neither it nor its table exists, else the first of path-2, path-3, ... that is free."""
    stem, suffix = _split(path.name)
    candidate, k = path, 1
    while candidate.exists() or table_path(candidate).exists():
        k += 1
        candidate = path.with_name(f"{stem}-{k}{suffix}")
    return candidate


def _split(name: str) -> tuple[str, str]:
    for suffix in (".json.gz", ".json", ".gz"):
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)], suffix
    return name, ""


def table_path(trace: Path) -> Path:
    name = trace.name
    for suffix in (".json.gz", ".json", ".gz"):
        if name.endswith(suffix):
            return trace.with_name(name[: -len(suffix)] + ".txt")
    return trace.with_name(name + ".txt")


def run_profile(args, reader: Reader) -> int:
    from .target import check_request, resolve
    from .usercode import their_errors

    if args.compile_mode:
        args.compile, args.warmup = True, args.warmup or args.compile_mode != "default"
    check_request(args)  # before torch and the device: a typo costs nothing
    torch = import_torch()
    device, cpu_note = pick_device(torch, args.device)
    target = resolve(args, device)
    if cpu_note:
        print(cpu_note, file=sys.stderr)
    out, taken = output_path(args, target.workload, target.tag)
    with their_errors():
        step = compile_step(torch, target, args.compile_mode) if args.compile else target.step
        if args.warmup:
            for _ in range(3):
                step()
            if device == "cuda":
                torch.cuda.synchronize()
        prof = capture(torch, step, target.label, device, args)
    make_folder(out)
    write_trace(prof, out, args.with_stack)
    note = write_table(prof, out, device, reader, args.with_stack)
    where = f"tracetui: wrote {out} and {table_path(out)}"
    print(where + (f" ({taken.name} was taken)" if taken else "") + (f" ({note})" if note else ""), file=sys.stderr)
    print("\n".join(reader.verdict(out)))
    return 0 if args.no_open else reader.open(out)


def compile_step(torch, target, mode: str | None = None):
    options = {"mode": mode} if mode and mode != "default" else {}
    if target.fn is None:
        return torch.compile(target.step, **options)
    compiled = torch.compile(target.fn, **options)
    return lambda: compiled(*target.args)


def capture(torch, step, label: str, device: str, args, quiet: bool = True):
    """The series' profiler call: schedule(wait=1, warmup=1, active=N), N+2 iterations (torch's USDT lines hidden
    unless quiet is False: a rank of a job filters its log instead, and a rank that dies keeps its last lines)."""
    from torch.profiler import ProfilerActivity, schedule

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    sched = schedule(wait=1, warmup=1, active=args.steps, repeat=1)
    with interrupt_kept():
        return _capture(torch, step, label, activities, sched, args, quiet)


@contextmanager
def interrupt_kept() -> Iterator[None]:
    """Ctrl-C stays Ctrl-C. Pressed while Kineto prepares its trace (seconds, on the step into warm-up), it left
    torch's profile with its action set and no Kineto profiler; profile.__exit__ then asserted "Profiler must be
    initialized before starting trace" (torch/profiler/profiler.py, _KinetoProfile.start_trace), which replaced the
    interrupt and read as tracetui's internal error."""
    try:
        yield
    except AssertionError as exc:
        if isinstance(exc.__context__, KeyboardInterrupt):
            raise KeyboardInterrupt from None
        raise


def _capture(torch, step, label: str, activities, sched, args, quiet: bool = True):
    from contextlib import nullcontext

    from torch.profiler import profile, record_function

    with (
        quiet_usdt() if quiet else nullcontext(),
        profile(
            activities=activities,
            schedule=sched,
            record_shapes=args.record_shapes,
            with_stack=args.with_stack,
            profile_memory=args.profile_memory,
        ) as prof,
    ):
        for k in range(args.steps + 2):
            if k == 2:  # the first active step: the profiler takes metadata only while it records
                prof.add_metadata("torch_version", str(torch.__version__))  # which torch wrote the trace
            with record_function(label):
                step()
            prof.step()
    return prof


def write_trace(prof, out: Path, with_stack: bool = False) -> None:
    """Export to a temp file in the same folder (our frames dropped), then rename: no half file under the name."""
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp.json", dir=out.parent)
    os.close(fd)
    try:
        with quiet_usdt():
            prof.export_chrome_trace(tmp)
        if with_stack:
            clean_trace_file(tmp)
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


def write_table(prof, out: Path, device: str, reader: Reader, with_stack: bool = False) -> str | None:
    """torch's key_averages table (without Python frames); if torch fails, the same table from tracetui's model."""
    sort = "cuda_time_total" if device == "cuda" else "cpu_time_total"
    note = None
    try:
        text = key_averages(prof, with_stack).table(sort_by=sort, row_limit=15)
    except Exception as exc:  # noqa: BLE001 - torch 2.13 raises UnicodeDecodeError with with_stack
        header = f"# computed by tracetui from {out.name}: torch's key_averages() raised {type(exc).__name__}\n"
        text = header + reader.table(out, sort, 15) + "\n"
        note = f"torch's key_averages() failed ({type(exc).__name__}); the table was computed by tracetui"
    atomic_write_text(table_path(out), text)
    return note


def key_averages(prof, with_stack: bool = False):
    """torch's key_averages() with no Python-frame rows, as torch up to 2.11 prints it on every torch.

    torch 2.12 and 2.13 list a with_stack capture's frames as rows; 2.14 hides them
    (include_python_functions=False) but keeps them in its tree, so the op above a frame loses the frame's time.
    Here torch's own tree and averages run over its events less the frames, as 2.11's did: a frame's time is
    the self time of the op it ran under, and tracetui's ops table is the same.
    """
    events = prof.profiler.function_events
    if not with_stack or not any(getattr(e, "is_python_function", False) for e in events):
        return prof.key_averages()
    return frameless(events).key_averages()


def frameless(events):
    """An EventList of copies of torch's events less the Python frames, its tree built again by torch."""
    from torch.autograd.profiler_util import EventList

    kept = []
    for e in events:
        if getattr(e, "is_python_function", False):
            continue
        c = copy.copy(e)  # the profiler's own events keep their tree
        c.cpu_children, c.cpu_parent, c.kernels = [], None, list(e.kernels)
        kept.append(c)
    out = EventList(
        kept,
        use_device=getattr(events, "_use_device", None),
        profile_memory=getattr(events, "_profile_memory", False),
        with_flops=getattr(events, "_with_flops", False),
    )
    out._build_tree()
    return out


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
