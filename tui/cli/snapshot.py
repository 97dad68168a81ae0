"""The commands on allocator snapshots: `memory SNAPSHOT` and `diff A B` of two snapshots (tables.py routes here)."""

from __future__ import annotations

import argparse
import sys

from .options import UsageError


def read(path: str):
    """A snapshot's report inputs: the snapshot and its per-device memory; what it lacks said on stderr."""
    from ..model.snapshot import open_snapshot

    snap = open_snapshot(path)
    if not snap.has_history:
        print(
            f"tracetui: note: {path}: no history in this snapshot, segments only; record one with "
            "torch.cuda.memory._record_memory_history() before the run",
            file=sys.stderr,
        )
    return snap


def memory_of_snapshot(args: argparse.Namespace) -> int:
    from ..model.snapshot.report import report
    from ..reports.snapshot import render_snapshot

    print(render_snapshot(report(read(args.trace)), args.format))
    return 0


def diff_of_snapshots(args: argparse.Namespace) -> int:
    from ..model.snapshot.diff import diff
    from ..reports.snapshot_diff import render_snapshot_diff

    if args.fail_if_slower is not None:
        raise UsageError("--fail-if-slower compares step times: it does not apply to two snapshots")
    d = diff(read(args.trace_a), read(args.trace_b))
    print(render_snapshot_diff(d, args.format, args.limit))
    return 0
