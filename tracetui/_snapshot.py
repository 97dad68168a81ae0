"""The public Snapshot: an allocator snapshot (torch.cuda.memory._dump_snapshot) read safely, as plain data.

s = tracetui.snapshot("snapshot.pickle")
s.memory()["devices"][0]["peak"]          # what `tracetui memory SNAPSHOT --format json` prints
s.allocations(alive_at_us=s.memory()["devices"][0]["peak"]["time_us"])   # who was alive then, with frames
s.diff("after.pickle")                     # `tracetui diff A B` of two snapshots
s.join(tracetui.load("trace.json"))        # the trace's allocations with the snapshot's frames
"""

from __future__ import annotations

import os
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from ._trace import Trace, UsageError

if TYPE_CHECKING:
    from tui.model.snapshot.columns import Snapshot as Columns
    from tui.model.snapshot.frames import Namer
    from tui.model.snapshot.report import DeviceMemory, SnapshotReport


class Snapshot:
    """One snapshot. Each method returns what the matching command prints with --format json, as plain data.
    Make one with tracetui.snapshot(); the file is read with a restricted unpickler (nothing in it runs)."""

    def __init__(self, columns: Columns) -> None:
        self.columns = columns  # the model's columns (tui/model/snapshot): for what the methods do not cover

    def __repr__(self) -> str:
        entries = sum(len(h) for h in self.columns.histories.values())
        return f"<tracetui.Snapshot {self.path!r}: {len(self.columns.segments):,} segments, {entries:,} entries>"

    @property
    def path(self) -> str:
        return self.columns.path

    @property
    def devices(self) -> list[int]:
        return self.columns.devices

    @property
    def notes(self) -> list[str]:
        """What reading it had to say (`note: ...: no history in this snapshot`), as the CLI prints it on stderr."""
        return self.columns.notes

    @property
    def has_history(self) -> bool:
        """Whether the allocator recorded its history (torch.cuda.memory._record_memory_history())."""
        return self.columns.has_history

    @cached_property
    def _memories(self) -> dict[int, DeviceMemory]:
        from tui.model.snapshot.report import device_memory

        return {d: device_memory(self.columns, d) for d in self.columns.devices}

    @cached_property
    def _report(self) -> SnapshotReport:
        from tui.model.snapshot.report import report

        return report(self.columns, self._memories)

    @cached_property
    def _namer(self) -> Namer:
        from tui.model.snapshot.frames import Namer

        return Namer(self.columns.stacks)

    def memory(self) -> dict:
        """Per device: now, the peak, by frame, the segments, never freed, OOMs (`tracetui memory SNAPSHOT`)."""
        from tui.reports.snapshot import snapshot_document

        return snapshot_document(self._report)

    def allocations(self, device: int | None = None, alive_at_us: float | None = None, frames: bool = False) -> list:
        """One dict per allocation of a device (the first by default), in stacking order: its bytes, address,
        stream, times (µs from the history's first entry; end None: never freed) and the frame that made it;
        alive_at_us: only those alive then; frames: with its stack, innermost first."""
        from tui.model.snapshot.history import ALIVE
        from tui.model.snapshot.report import label_of

        d = self._device(device)
        a = self._memories[d].allocs
        h = self.columns.histories.get(d)
        t0 = int(h.time_ns[0]) if h is not None and len(h) else 0
        rows = np.arange(len(a))
        if alive_at_us is not None:
            live = (a.start_ns <= t0 + alive_at_us * 1000) & (a.end_ns > t0 + alive_at_us * 1000)
            rows = np.flatnonzero(live)
        out = []
        for r in rows.tolist():
            end = int(a.end_ns[r])
            row: dict[str, Any] = {
                "addr": int(a.addr[r]),
                "requested_bytes": int(a.size[r]),
                "block_bytes": int(a.block[r]),
                "stream": int(a.stream[r]),
                "start_us": (int(a.start_ns[r]) - t0) / 1000,
                "end_us": None if end == ALIVE else (end - t0) / 1000,
                "frame": label_of(a, r, self._namer),
                "op": self._namer.op(int(a.stack[r])),
            }
            if frames:
                row["frames"] = self._namer.lines(int(a.stack[r]), cpp=True)
            out.append(row)
        return out

    def diff(self, other: str | os.PathLike[str] | Snapshot, limit: int = 20) -> dict:
        """What grew from this snapshot to other, by frame (`tracetui diff A B` of two snapshots)."""
        from tui.model.snapshot.diff import diff
        from tui.tables.snapshot_diff import document

        b = other if isinstance(other, Snapshot) else snapshot(other)
        return document(diff(self.columns, b.columns), limit)

    def join(self, trace: Trace) -> dict:
        """The trace's allocations matched to this snapshot's by address and time, by the snapshot's frame and the
        trace's op (`tracetui memory TRACE --snapshot SNAPSHOT`, its "snapshot" part)."""
        from tui.model.snapshot.join import by_frame, join
        from tui.reports.snapshot import join_document

        joined = []
        for j in join(trace.results, self._memories):
            mem = self._memories.get(int(j.device.split(":")[1]))
            joined.append((j, by_frame(trace.results, j, mem, self._namer) if mem is not None else []))
        return join_document(self.path, joined)

    def _device(self, device: int | None) -> int:
        if not self.columns.devices:
            raise UsageError(f"{self.path}: the snapshot holds no device")
        if device is None:
            return self.columns.devices[0]
        if device not in self.columns.devices:
            raise UsageError(f"{self.path}: no device {device}; it has {', '.join(map(str, self.devices))}")
        return device


def snapshot(path: str | os.PathLike[str], *, cache: bool = True) -> Snapshot:
    """Read an allocator snapshot (.pickle from torch.cuda.memory._dump_snapshot, its JSON, either gzipped) with a
    restricted unpickler: anything but plain data is refused. Its columns are kept in the on-disk cache unless
    cache=False (opening it again reads them). Raises TraceError (one line naming the file)."""
    from tui.model.snapshot import open_snapshot

    return Snapshot(open_snapshot(os.fspath(path), cache=cache))
