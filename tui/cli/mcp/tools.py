"""The MCP server's tools: typed functions whose docstrings are what the agent reads about them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .traces import page

if TYPE_CHECKING:
    from .traces import Traces

TRACE = "trace: the path of a .json or .json.gz trace, or of a folder of per-rank traces."


def tools(traces: Traces) -> list:
    """Every tool but sql, bound to the server's open traces."""
    from ...model.analyses.critical.whatif import grammar_examples

    def summary(trace: str) -> dict[str, Any]:
        """The window, GPU busy time and utilization, launch calls, kernels, steps, and the verdict
        (overhead-bound, compute-bound, mixed, or a CPU-only verdict) with its reason. As `tracetui summary`."""
        return traces.get(trace).summary()

    def explain(trace: str) -> dict[str, Any]:
        """What the patterns in the trace mean (cold start, launch overhead, idle GPU, syncs, kernel names, ...),
        each finding with its figures as numbers with units. As `tracetui explain`."""
        return traces.get(trace).explain()

    def ops(
        trace: str,
        sort: str | None = None,
        limit: int = 50,
        offset: int = 0,
        group_by_shape: bool = False,
        python_frames: bool = False,
    ) -> dict[str, Any]:
        """torch's key_averages() table: per op, calls, self and total CPU time, self and total device time.
        sort: {ops_sorts} (default: device total, or CPU total without GPU work). python_frames: Python frames as rows, as torch 2.12 and 2.13 print
        them (default: torch's table up to 2.11, a frame's time in the self time of the op it ran under). As
        `tracetui ops`."""
        doc = traces.get(trace).ops(sort=sort, group_by_shape=group_by_shape, python_frames=python_frames)
        return page(doc, "rows", limit, offset)

    def kernels(trace: str, sort: str | None = None, limit: int = 50, offset: int = 0) -> dict[str, Any]:
        """Per GPU kernel (and memcpy, memset) name: its role, count, total, average, min, max, % of GPU time and
        launch latency. sort: {kernels_sorts}. As `tracetui kernels`."""
        return page(traces.get(trace).kernels(sort=sort), "rows", limit, offset)

    def code(
        trace: str, sort: str | None = None, limit: int = 50, offset: int = 0, all_frames: bool = False
    ) -> dict[str, Any]:
        """Time per source line and nn.Module of a with_stack trace, with the device time launched from beneath
        it; library frames fold into your code's unless all_frames. sort: {code_sorts}. As `tracetui code`."""
        return page(traces.get(trace).code(sort=sort, all_frames=all_frames), "rows", limit, offset)

    def memory(trace: str) -> dict[str, Any]:
        """Per device: peak allocated and reserved bytes, when and in which op, the ops that allocate most, what
        is never freed (needs profile_memory=True). As `tracetui memory`. trace may also be a memory snapshot
        (torch.cuda.memory._dump_snapshot .pickle): then reserved and allocated now, the peak of its history and
        what was alive then by the frame that allocated it, the segments (free, largest free block), never-freed
        allocations, and each OOM explained (fragmentation or memory in use)."""
        if _is_snapshot(trace):
            return traces.snapshot(trace).memory()
        return traces.get(trace).memory()

    def roofline(
        trace: str, sort: str | None = None, limit: int = 50, offset: int = 0, gpu: str | None = None
    ) -> dict[str, Any]:
        """Per (op, input shapes, dtype): FLOPs, bytes, achieved TFLOP/s and GB/s, the roof it sits under and the
        % of it (needs record_shapes=True). sort: {roofline_sorts}. gpu: another GPU's roofs (H100, MI300X, ...). As
        `tracetui roofline`."""
        return page(traces.get(trace).roofline(sort=sort, gpu=gpu), "rows", limit, offset)

    def critical(
        trace: str,
        step: int | None = None,
        annotation: str | None = None,
        instance: int = 0,
        what_if: list[str] | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> dict[str, Any]:
        """The critical path of a step (step: ProfilerStep#N; default the typical step, or the whole trace without
        steps) or of the instance-th span whose name holds annotation: what bounds it, class by class (cpu_bound,
        gpu_compute_bound, gpu_kernel_launch_overhead, ...), the path's events (ids usable with `event`), and
        what-if estimates. what_if specs (a factor: times faster; 0: gone), by example: {specs}; they combine.
        The path is paged by limit and offset. As `tracetui critical`."""
        t = traces.get(trace)
        doc = t.critical(step=step, annotation=annotation, instance=instance, what_if=what_if or ())
        return page(doc, "path", limit, offset) if "path" in doc else doc

    critical.__doc__ = (critical.__doc__ or "").replace("{specs}", grammar_examples())  # the what-if grammar's
    for sorted_tool in (ops, kernels, code, roofline):  # the sort keys the tables take, from their one definition
        sorted_tool.__doc__ = _with_sorts(sorted_tool.__doc__ or "")

    def diff(a: str, b: str, limit: int = 20) -> dict[str, Any]:
        """Compare trace A with trace B: summaries, steps, and the limit ops and kernels that changed most (0: all).
        As `tracetui diff A B`. Two memory snapshots: what grew, by frame, at each one's peak and at its end."""
        import tracetui

        if _is_snapshot(a) or _is_snapshot(b):
            return traces.snapshot(a).diff(traces.snapshot(b), limit=limit)
        return tracetui.diff(traces.get(a), traces.get(b), limit=limit)

    def allocations(
        snapshot: str, alive_at_us: float | None = None, device: int | None = None, limit: int = 100, offset: int = 0
    ) -> dict[str, Any]:
        """The allocations of a memory snapshot (torch.cuda.memory._dump_snapshot .pickle), in stacking order:
        bytes requested and of the block, address, stream, start and end (us from the history's start; end null:
        never freed), the frame that made it and its stack. alive_at_us: only those alive then (the peak's time
        is in memory's peak.time_us). Paged by limit and offset."""
        rows = traces.snapshot(snapshot).allocations(device=device, alive_at_us=alive_at_us, frames=True)
        return page({"allocations": rows}, "allocations", limit, offset)

    def steps(trace: str, limit: int = 100, offset: int = 0) -> dict[str, Any]:
        """One row per ProfilerStep#N: its event id, number, rank, start, duration and end (us). Paged: limit
        rows from offset; the page says how many are left and the next offset."""
        return page({"steps": traces.get(trace).steps()}, "steps", limit, offset)

    def search_events(
        trace: str,
        name: str,
        cat: str | None = None,
        start_us: float | None = None,
        end_us: float | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> dict[str, Any]:
        """Events whose name matches a regular expression (case-insensitive, anywhere in the name), in time
        order, each with its id for the event tool. cat: kernel, cpu_op, cuda_runtime, user_annotation, ...;
        start_us/end_us: keep those overlapping the window (us from the first event). Paged: limit
        rows from offset; the page says how many are left and the next offset."""
        return _events(traces.get(trace), name, cat, start_us, end_us, limit, offset)

    def events_in_range(
        trace: str, start_us: float, end_us: float, cat: str | None = None, limit: int = 50, offset: int = 0
    ) -> dict[str, Any]:
        """The events that overlap [start_us, end_us] (us from the trace's first event), in time order, each with
        its id for the event tool. cat: kernel, cpu_op, cuda_runtime, user_annotation, ... Paged: limit
        rows from offset; the page says how many are left and the next offset."""
        return _events(traces.get(trace), None, cat, start_us, end_us, limit, offset)

    def event(trace: str, id: int) -> dict[str, Any]:  # noqa: A002 - the id, as every table names it
        """One event by id: its row, self time and args; its parents (outermost first) and children; for device
        work the runtime call that launched it, for a host event the kernels launched from beneath it; and its
        flow arrows (each with the event at the other end)."""
        return traces.get(trace).event(id)

    for tool in (summary, explain, ops, kernels, code, memory, roofline, critical, steps, search_events,
                 events_in_range, event):  # fmt: skip
        tool.__doc__ = f"{tool.__doc__} {TRACE}"
    return [summary, explain, ops, kernels, code, memory, roofline, critical, diff, steps, search_events,
            events_in_range, event, allocations, *device_tools(traces)]  # fmt: skip


def _is_snapshot(path: str) -> bool:
    from ...model.snapshot.read import is_snapshot

    return is_snapshot(path)


def device_tools(traces: Traces) -> list:
    """Where the device's time goes and how launches queue (HTA's analyses): breakdown, queues, op_kernels."""

    def breakdown(trace: str, step: int | None = None, by: str = "rank", idle_stats: bool = False) -> dict[str, Any]:
        """Where the device's time goes: per device (by "rank") or per stream (by "stream"), the time compute,
        communication (collectives) and copies ran alone, their overlaps by name and the idle time (they add up to
        the span); then each stream's idle time by cause: host_wait (the CPU launched late), other_stream (waiting
        on another stream), between_kernels (gaps under 30 us), other. step: ProfilerStep#N (default: the whole
        trace). idle_stats: also each cause's idle intervals per stream (count, mean, std, p25/p50/p75, max).
        As `tracetui breakdown`."""
        return traces.get(trace).breakdown(step=step, by=by, idle_stats=idle_stats)

    def queues(trace: str) -> dict[str, Any]:
        """Per stream: its launch queue (launches waiting to start: time-weighted mean, mean per sample as HTA
        gives it, p50, p95, max, time full) and its launches' delays (median, p95) and outliers (calls over 50 us,
        starts over 100 us after the call ended). As `tracetui kernels --queues`."""
        return traces.get(trace).queues()

    def op_kernels(trace: str, sort: str | None = None, limit: int = 50, offset: int = 0) -> dict[str, Any]:
        """Per op and the kernel sequence it launched: how many calls, the op's start to its first launch, that
        launch to its kernel's start, device time per call. sort: count (default), op_to_launch, launch_to_start,
        device, name. As `tracetui ops --kernels`."""
        return page(traces.get(trace).op_kernels(sort=sort), "rows", limit, offset)

    def sequences(trace: str, min_length: int = 3, top: int = 10) -> dict[str, Any]:
        """The recurring kernel sequences (HTA's frequent CUDA kernel sequences): per op and the kernels it launched,
        how often, total and mean device time, its stack, and what fusing it would save on the critical path of the
        typical step. As `tracetui kernels --sequences`."""
        return traces.get(trace).sequences(min_length=min_length, top=top)

    for tool in (breakdown, queues, op_kernels, sequences):
        tool.__doc__ = f"{tool.__doc__} {TRACE}"
    return [breakdown, queues, op_kernels, sequences]


def _events(t, name, cat, start_us, end_us, limit: int, offset: int) -> dict[str, Any]:
    ids = t._find(name, cat, start_us, end_us)
    doc = page({"events": ids}, "events", limit, offset)
    doc["events"] = t._rows_of(doc["events"])
    return doc


def sql_tool(traces: Traces):
    """The sql tool: DuckDB over the trace's tables, no file access, settings locked."""

    def sql(trace: str, query: str, limit: int = 100, offset: int = 0) -> dict[str, Any]:
        """Run a DuckDB SQL query over the trace's tables: events (id, name, cat, kind, ph, pid, tid, lane, rank,
        ts_us, dur_us, depth, parent_id, correlation, external_id, stream, device, step), ops, kernels, launches
        (launch_id, activity_id, latency_us), steps, memory, counters, flows (flow_id, kind, from_id, to_id, ...).
        Ids join across tables (events.id). No file can be read or written. Paged: limit rows from offset; more
        says whether rows are left."""
        if limit < 1 or offset < 0:
            raise ValueError(f"limit must be 1 or more and offset 0 or more (got limit {limit}, offset {offset})")
        answer = traces.get(trace)._locked.query(query, max_rows=offset + limit + 1)
        rows = answer.rows[offset : offset + limit]
        more = len(answer.rows) > offset + limit
        info = {"offset": offset, "returned": len(rows), "more": more} | (
            {"next_offset": offset + limit} if more else {}
        )
        return {
            "columns": answer.columns,
            "rows": [dict(zip(answer.columns, r, strict=True)) for r in rows],
            "page": info,
        }

    return sql


def _with_sorts(doc: str) -> str:
    """A tool's docstring with its table's sort keys filled in (the memory ones of ops said as needing memory)."""
    from ...tables import code, kernels, ops, roofline

    def listed(keys) -> str:
        return ", ".join(keys)

    plain = [k for k in ops.SORTS if not k.endswith("_memory")]
    memory = [k for k in ops.SORTS if k.endswith("_memory")]
    return doc.format(
        ops_sorts=f"{listed(plain)}, and with profile_memory {listed(memory)}",
        kernels_sorts=listed(kernels.SORTS),
        code_sorts=listed(code.SORTS),
        roofline_sorts=listed(roofline.SORTS),
    )
