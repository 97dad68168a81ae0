"""What the snapshot viewer's details panel says of an allocation and of a segment, as lines of text."""

from __future__ import annotations

from ..model.snapshot.frames import Namer
from ..model.snapshot.history import ALIVE, BEFORE, BEFORE_ALIVE, Allocations
from ..model.snapshot.report import FrameRow, label_of
from ..model.snapshot.state import FREE, UNKNOWN, State
from ..text.fmt import fmt_dur, fmt_memory, fmt_memory_gutter, plural
from .snapshot import pool_name, stream_name, when

ORIGIN = {
    BEFORE: "allocated before the history began (its alloc is not in it)",
    BEFORE_ALIVE: "allocated before the history began, still allocated at the end",
}


def allocation_lines(a: Allocations, row: int, namer: Namer, t0: int, cpp: bool = False, note: str = "") -> list[str]:
    """The selected allocation: its bytes, address, stream, lifetime, the frame that made it and its frames;
    note: what its entry adds (a compile context, the user's metadata)."""
    size, block = int(a.size[row]), int(a.block[row])
    out = [
        f"{fmt_memory(size)} requested" + (f" (block {fmt_memory(block)})" if block != size else ""),
        f"at {int(a.addr[row]):#x} on stream {stream_name(int(a.stream[row]))}",
        *_lifetime(a, row, t0),
        f"frame: {label_of(a, row, namer)}" + (f" · {op}" if (op := namer.op(int(a.stack[row]))) else ""),
        *([note] if note else []),
        "",
        "Allocated at (innermost first):" if a.origin[row] not in ORIGIN else "Frames of its block or its free:",
        *("  " + line for line in (namer.lines(int(a.stack[row]), cpp) or ["(none recorded)"])),
    ]
    free = int(a.free_stack[row])
    if free >= 0 and free != int(a.stack[row]):
        out += ["", "Freed at:", *("  " + line for line in namer.lines(free, cpp))]
    return out


def frame_lines(r: FrameRow, kept: bool, namer: Namer, timed: bool, cpp: bool = False) -> list[str]:
    """A row of the Frames view: what its allocations add up to, when they were made (those never freed), and
    the frames of its largest allocation."""
    whole = "of all that was never freed" if kept else "of the memory alive at the peak"
    out = [
        r.frame + (f" · {r.op}" if r.op else ""),
        f"{fmt_memory(r.bytes)} in {plural(r.count, 'allocation')}, {100 * r.share:.1f}% {whole}",
    ]
    if kept:
        out.append(f"allocated from {when(r.first_ns, timed)} to {when(r.last_ns, timed)}, never freed")
    frames = namer.lines(r.stack, cpp)
    if frames:
        out += ["", "Its largest allocation was made at (innermost first):", *("  " + line for line in frames)]
    return [*out, "", "⏎ draws them in gold on the timeline"]


def _lifetime(a: Allocations, row: int, t0: int) -> list[str]:
    start, end = int(a.start_ns[row]), int(a.end_ns[row])
    origin = int(a.origin[row])
    born = ORIGIN.get(origin, f"allocated at {fmt_dur(start - t0)} (entry {int(a.alloc_entry[row]) + 1:,})")
    if end == ALIVE:
        return [born, "never freed: still allocated when the snapshot was taken"]
    freed = f"freed at {fmt_dur(end - t0)} (entry {int(a.end_entry[row]) + 1:,})"
    asked = int(a.freed_ns[row])
    if 0 <= asked < end:
        freed += f", asked {fmt_dur(end - asked)} before (waiting for another stream)"
    lived = "" if origin in ORIGIN else f", lived {fmt_dur(end - start)}"
    return [born, freed + lived]


def segment_lines(st: State, k: int, a: Allocations, namer: Namer, most: int = 200) -> list[str]:
    """A segment: its size, stream, pool, and each of its blocks (offset, size, who holds it or free)."""
    blocks = st.blocks_of(k)
    free = blocks[st.blk_alloc[blocks] == FREE]
    used = blocks[st.blk_alloc[blocks] != FREE]
    start = int(st.seg_addr[k])
    out = [
        f"Segment {start:#x}: {fmt_memory(int(st.seg_size[k]))}, stream {stream_name(int(st.seg_stream[k]))}, "
        f"{pool_name(bool(st.seg_small[k]))}",
        f"{len(used):,} used blocks ({fmt_memory(int(st.blk_size[used].sum()))}), {len(free):,} free "
        f"({fmt_memory(int(st.blk_size[free].sum()))}"
        + (f", largest {fmt_memory(int(st.blk_size[free].max()))})" if len(free) else ")"),
        "" if st.exact else "(rebuilt from the history: a freed block's size is its request rounded to 512 bytes)",
        f"{'Offset':>7} {'Size':>7}  Held by",
    ]
    for b in blocks[:most].tolist():
        alloc = int(st.blk_alloc[b])
        who = "free" if alloc == FREE else "(not in the history)" if alloc == UNKNOWN else label_of(a, alloc, namer)
        offset, size = fmt_memory_gutter(int(st.blk_addr[b]) - start), fmt_memory_gutter(int(st.blk_size[b]))
        out.append(f"{offset:>7} {size:>7}  {who}")
    if len(blocks) > most:
        out.append(f"… {len(blocks) - most:,} more blocks")
    return out
