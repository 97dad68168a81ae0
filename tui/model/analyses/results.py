"""Every analysis of a trace, computed once on first use: the tables, the summary, the explain findings.

Results is the Analysis the app and the command line hold. The analyses below it take the
structure (Analysis) and what they need from each other as arguments, so none imports this module.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from ..analysis import Analysis, computed, derived, stored
from ..lazy import imports_on_use
from ..steps import Step, typical_step
from ..store import Blob
from ..threads import side_by_side

# The analyses are imported when first used (lazy.py): a cached command reads its values back and runs none of them.
if TYPE_CHECKING:
    from ..load.args import event_args
    from .breakdown import BreakdownReport, breakdown
    from .code import CodeTable, code_table, python_levels
    from .compiling import Compiling, compiling
    from .copies import Copies, copies
    from .critical import CriticalPath, WindowError, critical_path, span_window
    from .critical.queue import LaunchQueues, launch_queues
    from .critical.window import Window, whole_trace
    from .details import footprint
    from .explain.rules import Finding, NoteIndex, explain
    from .explain.uses import Uses, run_uses
    from .fusion import SHORTEST_VIEWED, VIEWED, SequenceRow, sequence_rows
    from .graphs.replay import graph_owner, own_launches, replay_extents
    from .kernels import KernelRow, kernel_rows
    from .memory import Curve, DeviceMemory, curves, memory_report
    from .op_kernels import OpKernels, op_kernels
    from .ops import OpsTable, OpTimes, op_times, ops_table
    from .queues import QueueRow, queue_rows
    from .ranks import Alignment, Job, RankRow, job, rank_events, rank_row
    from .roofline.points import Roofline, roofline
    from .sequences import KernelSequence, kernel_sequences
    from .summary import LaunchesAndSteps, Summary, launches_and_steps, step_calls, summarize
    from .verdict import judge

__getattr__ = imports_on_use(globals())


class Results(Analysis):
    """The structure plus the tables, summary and findings (pure data, no formatting)."""

    @computed("aggregate")
    def op_times(self) -> OpTimes:
        shown = self.time_nesting  # first: the summary's passes make the links beside it (summary.py)
        return op_times(self.trace, self.links.launcher, shown)

    @stored(Blob(), phase="aggregate")
    def ops(self) -> OpsTable:
        return ops_table(self.trace, self.op_times)

    @stored(Blob(), phase="aggregate")
    def ops_by_shape(self) -> OpsTable:
        return ops_table(self.trace, self.op_times, group_by_shape=True)

    @computed("aggregate")
    def op_times_frames(self) -> OpTimes:
        """The per-event quantities of the table with Python frames as rows (torch 2.12 and 2.13's)."""
        return op_times(self.trace, self.links.launcher, self.time_nesting, python_frames=True)

    @stored(Blob(), phase="aggregate")
    def ops_frames(self) -> OpsTable:
        """The ops table with Python frames (and events still open at the window's end) as rows."""
        if not self.op_times.other_differs:
            return self.ops
        return ops_table(self.trace, self.op_times_frames)

    @stored(Blob(), phase="aggregate")
    def ops_by_shape_frames(self) -> OpsTable:
        """ops_frames, one row per (name, input shapes)."""
        if not self.op_times.other_differs:
            return self.ops_by_shape
        return ops_table(self.trace, self.op_times_frames, group_by_shape=True)

    def op_table(self, by_shape: bool = False, python_frames: bool = False) -> OpsTable:
        """The ops table asked for: by input shape or not, Python frames as rows (torch 2.12, 2.13) or not."""
        if python_frames:
            return self.ops_by_shape_frames if by_shape else self.ops_frames
        return self.ops_by_shape if by_shape else self.ops

    @stored(Blob(), phase="aggregate")
    def kernels(self) -> list[KernelRow]:
        return kernel_rows(self.trace, self.links)

    @computed("aggregate")
    def busy(self) -> Summary:
        """The summary's figures before its verdict: busy shares, launches, steps (summary.py)."""
        return summarize(
            self.trace,
            lambda: self.ops,
            lambda: self.nesting.parent,
            lambda: self.links.launcher,
            lambda: self.launches_and_steps,
        )

    @computed("aggregate")
    def launches_and_steps(self) -> LaunchesAndSteps:
        """Each event's graph owner, the launch calls, and the steps with the device work each launched."""
        return launches_and_steps(self.trace, self.links.launcher)

    @stored(Blob(), phase="aggregate")
    def compiling(self) -> Compiling:
        """torch.compile compiling in the trace: its time, frames, graphs, recompiles and steps (compiling.py)."""
        return compiling(self.trace, self.nesting.parent, [st.event for st in self.launches_and_steps[2]])

    @computed("aggregate")
    def typical(self) -> Step | None:
        """The typical step (steps.py): the median warm step of the first rank, those that compiled left out; None
        without steps."""
        steps = self.launches_and_steps[2]  # the summary's steps (summarize), ready before the ops table is
        return typical_step(steps, frozenset(self.compiling.steps)).step

    @stored(Blob(), phase="aggregate")
    def summary(self) -> Summary:
        """The summary with its verdict, read from the critical path of the typical step (verdict.py). The path
        needs the nesting and the steps, not the ops table: it is found beside the summary's figures."""
        busy, path = side_by_side(lambda: self.busy, self._critical_or_none)
        launch = self.launches_and_steps[1]
        calls = lambda step, facts: step_calls(self.trace, self.links.launcher, launch, step, facts)  # noqa: E731
        return judge(replace(busy), path, self.compiling, self.typical, calls)

    def _critical_or_none(self) -> CriticalPath | None:
        try:
            return self.critical
        except WindowError:
            return None

    @stored(Blob(), phase="aggregate")
    def findings(self) -> list[Finding]:
        """What the explain rules say about this trace (see explain/rules.py)."""
        return explain(self, self.summary)

    @derived
    def frameless(self) -> Analysis:
        """The same trace without its Python frames: for the timeline, the tree and moves when frames are hidden."""
        return Analysis(self.trace, hide_python=True, base=self)

    @stored(Blob())
    def frame_levels(self) -> int:
        """How many Python frames deep the stacks go (0: no frames): deep stacks are hidden by default."""
        return python_levels(self.trace)

    @stored(Blob(), phase="aggregate")
    def code(self) -> CodeTable:
        """Time per source frame, library frames folded into the nearest frame shown above them."""
        return code_table(self, fold=True)

    @stored(Blob(), phase="aggregate")
    def code_all(self) -> CodeTable:
        """Time per source frame, every frame its own row."""
        return code_table(self, fold=False)

    @stored(Blob(), phase="aggregate")
    def kernel_footprints(self) -> dict[int, dict[str, str]]:
        """The footprint args (grid, block, registers, ...) of each kernel row's example event."""
        return {r.example: footprint(event_args(self.trace, r.example)) for r in self.kernels}

    @computed("aggregate")
    def uses(self) -> Uses:
        """What the run already uses (torch.compile, graphs, its math's precision): advice starts from it (explain/uses.py)."""
        return run_uses(self)

    @computed("aggregate")
    def notes(self) -> NoteIndex:
        """The explain notes of each event, for the details panel."""
        return NoteIndex(self.findings)

    @stored(Blob(), phase="aggregate")
    def rank_row(self) -> RankRow:
        """This file as one rank of a job: its steps, GPU busy, collective and compute time (see ranks.py), and its
        verdict, the summary's."""
        row = rank_row(self)
        typical = self.summary.typical.us if row.steps else row.step_us  # the summary's: steps that compiled left out
        found = copies(self.trace, rank_events(self, None)).rows
        return replace(row, step_us=typical, verdict=self.summary.verdict, bound_by=self.summary.bound_by, copies=found)

    @computed("aggregate")
    def rank_rows(self) -> list[RankRow]:
        """A folder opened as one trace: the row of each rank, stragglers marked (one row for a single file)."""
        if not self.trace.job:
            return [self.rank_row]
        rows = [rank_row(self, int(info["rank"]), str(info.get("file", ""))) for info in self.trace.ranks]
        return [replace(r, copies=copies(self.trace, rank_events(self, r.rank)).rows) for r in rows]

    @computed("aggregate")
    def job(self) -> Job | None:
        """A folder of ranks: what they say together (stragglers marked in rank_rows); None for one file."""
        if not self.trace.job:
            return None
        found = job(self.rank_rows, self.trace.report.notes)
        shifts = {int(info["rank"]): float(info.get("shift_us", 0.0)) for info in self.trace.ranks}
        found.alignment = Alignment(str(self.trace.job["alignment"]), shifts)  # the events were moved on load
        return found

    @stored(Blob(), phase="aggregate")
    def memory(self) -> list[DeviceMemory]:
        """Per device: the peak of allocated bytes and its op, the top allocating ops, candidate leaks."""
        return memory_report(self, self.memory_curves)

    @computed("link")
    def graph_owner(self) -> np.ndarray:
        """Per event: the graph launch whose correlation id it shares (-1: none), for device activities (graphs/replay.py)."""
        return graph_owner(self.trace)

    @computed("link")
    def own_launch(self) -> np.ndarray:
        """Per event: the call it counts as a launch of (-1: none; a graph replay's first activity: the graph launch,
        its others: none), graphs/replay.own_launches, for the details and SQL's launches."""
        return own_launches(self.trace, self.links.launcher, self.graph_owner)

    @computed("link")
    def graph_replays(self) -> list[tuple[int, int, int, int]]:
        """Per graph launch and device lane: (launch, track, first start, last end) of its replay, for the timeline."""
        return replay_extents(self.trace, self.graph_owner)

    @computed("link")
    def memory_curves(self) -> list[Curve]:
        """Per device: allocated and reserved bytes after each [memory] sample, for the timeline's lanes."""
        return curves(self)

    @stored(Blob(), phase="aggregate")
    def roofline(self) -> Roofline:
        """Per (op, input shapes, dtype): FLOPs, bytes, achieved rates against the detected GPU's roofs (roofline/points.py)."""
        return roofline(self)

    @computed("aggregate")
    def typical_window(self) -> Window:
        """The window the verdict and the critical path read by default: the typical step, else the whole trace."""
        step = self.typical
        return span_window(self.trace, step.event) if step is not None else whole_trace(self.trace)

    @stored(Blob(), phase="aggregate")
    def critical(self) -> CriticalPath:
        """The critical path of the typical step, or of the whole trace without steps (critical/)."""
        return critical_path(self, self.typical_window, self.graph_owner)

    @stored(Blob(), phase="aggregate")
    def launch_queues(self) -> LaunchQueues:
        """Per stream: its launch queue's depth, how often it ran dry or stayed full; per kernel name, its
        launch-to-start latency (critical/queue.py)."""
        return launch_queues(self.trace, self.links.launcher)

    @stored(Blob(), phase="aggregate")
    def breakdown(self) -> BreakdownReport:
        """The whole trace's temporal breakdown per device and per stream, and each stream's idle time by cause
        (breakdown/: HTA's temporal and idle-time breakdowns)."""
        return breakdown(self.trace, self.links.launcher, self.graph_owner)

    @stored(Blob(), phase="aggregate")
    def queues(self) -> list[QueueRow]:
        """Per stream: its launch queue's mean, percentiles and maximum, and its launches' delays (queues.py)."""
        return queue_rows(self.trace, self.links.launcher)

    @stored(Blob(), phase="aggregate")
    def op_kernels(self) -> list[OpKernels]:
        """Per (op, kernel sequence it launched): how often, its op-to-launch and launch-to-start delays (op_kernels.py)."""
        return op_kernels(self.trace, self.links.launcher, self.nesting.parent)

    @stored(Blob(), phase="aggregate")
    def sequences(self) -> list[KernelSequence]:
        """The recurring kernel sequences: per root op and the activities it launched, how often and how long
        (sequences.py: HTA's get_frequent_cuda_kernel_sequences)."""
        return kernel_sequences(self.trace, self.links.launcher, self.nesting)

    @computed("aggregate")
    def fused_sequences(self) -> list[SequenceRow]:
        """The viewer's sequences: the VIEWED with the most device time, with what fusing each saves (fusion.py)."""
        return sequence_rows(self, self.sequences, SHORTEST_VIEWED, VIEWED, "device")

    @stored(Blob(), phase="aggregate")
    def copies(self) -> Copies:
        """The copies per direction and the sets: count, bytes, time, bandwidth, pageable or pinned (copies.py)."""
        return copies(self.trace)
