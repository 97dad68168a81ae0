"""The commands on allocator snapshots: `memory SNAPSHOT` and `diff A B` of two snapshots (tables.py routes here)."""

from __future__ import annotations

import argparse
import os

from .options import BadUsage, tell


def read(path: str, cache: bool = True):
    """A snapshot (through the on-disk cache unless --no-cache), what reading it has to say printed on stderr."""
    from ..model.snapshot import open_snapshot

    snap = open_snapshot(path, cache=cache)
    for note in snap.notes:
        tell(f"tracetui: {note}")
    return snap


def memory_of_snapshot(args: argparse.Namespace) -> int:
    from ..model.snapshot.report import report
    from ..reports.snapshot import render_snapshot

    print(render_snapshot(report(read(args.trace, not args.no_cache)), args.format))
    return 0


def memory_with_snapshot(args: argparse.Namespace, results, devices) -> int:
    """`memory TRACE --snapshot SNAPSHOT`: the trace's report, then its allocations by the snapshot's frames."""
    from ..model.errors import TraceError, no_such_file
    from ..model.snapshot.read import is_snapshot
    from ..reports.formats import to_json
    from ..reports.memory import memory_document, render_memory
    from ..reports.snapshot import join_document, render_join

    if not os.path.exists(args.snapshot):
        raise TraceError(args.snapshot, no_such_file(args.snapshot))
    if not is_snapshot(args.snapshot):
        raise BadUsage(f"{args.snapshot}: not a memory snapshot (torch.cuda.memory._dump_snapshot writes one)")
    joined = _join(results, read(args.snapshot, not args.no_cache))
    for j, _ in joined:
        if j.reason:
            tell(f"tracetui: note: {args.snapshot}: {j.device}: {j.reason}")
    if args.format == "json":
        print(to_json(memory_document(devices) | {"snapshot": join_document(args.snapshot, joined)}))
    elif args.format == "csv":
        print(render_join(args.snapshot, joined, "csv"))
    else:
        print(render_memory(devices, args.format) + "\n\n" + render_join(args.snapshot, joined, args.format))
    return 0


def _join(results, snap):
    """Each device's join, with its rows by frame."""
    from ..model.snapshot.frames import Namer
    from ..model.snapshot.join import by_frame, join
    from ..model.snapshot.report import device_memory

    memories = {d: device_memory(snap, d) for d in snap.devices}
    namer = Namer(snap.stacks)
    out = []
    for j in join(results, memories):
        mem = memories.get(int(j.device.split(":")[1]))
        out.append((j, by_frame(results, j, mem, namer) if mem is not None else []))
    return out


def diff_of_snapshots(args: argparse.Namespace) -> int:
    from ..model.snapshot.diff import diff
    from ..reports.snapshot_diff import render_snapshot_diff

    if args.fail_if_slower is not None:
        raise BadUsage("--fail-if-slower compares step times: it does not apply to two snapshots")
    d = diff(read(args.trace_a, not args.no_cache), read(args.trace_b, not args.no_cache))
    print(render_snapshot_diff(d, args.format, args.limit))
    return 0
