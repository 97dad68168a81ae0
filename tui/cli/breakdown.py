"""`tracetui breakdown`: where the device's time goes (HTA's temporal and idle-time breakdowns); its --help states
HTA's definitions and where tracetui's differ."""

from __future__ import annotations

import argparse

from .options import BadUsage, Command, load, one_trace

EPILOG = """prints: the temporal breakdown per device (--by stream: per stream): compute, communication (collectives), \
copies (and sets) running alone, their overlaps (named), idle; then each stream's idle time by cause: host wait, \
other stream, between kernels, other; --idle-stats: the statistics of each cause's idle intervals per stream
defaults: the whole trace (each device from its first activity to its last), --by rank, --format text
window: --step N cuts ProfilerStep#N on every rank, from its start until its CPU span and the device work it \
launched have both ended
HTA: get_temporal_breakdown gives per rank the time from the first kernel to the last, its idle time, its compute \
time (a compute kernel running, overlaps included: compute_total_us here) and non-compute time (the rest: \
non_compute_us); get_idle_time_breakdown gives per stream the gaps between consecutive kernels as host wait (the \
launch call started after the stream went idle), kernel wait (a gap under consecutive_kernel_delay, 30: its docs \
say nanoseconds, its times are whole microseconds) and other.
differs: each moment counts once here, under the classes running then, so overlaps are named, not folded into \
compute. HTA cuts nanosecond timestamps to whole microseconds (the start rounded up, the end down: 386 of the \
shared DDP trace's 3,774 device activities last 0us or less, 3.75 ms of device time lost); tracetui keeps the \
nanoseconds. A class is read from the category \
(copies, sets) and the name (collectives: nccl, rccl, gloo), where HTA reads the name alone (a kernel named \
...Sync... is neither). HTA's other splits here into other stream (the next activity was queued and started \
within 10us of one on another stream of the device ending: an event wait) and other. A gap follows the latest \
end so far on the stream, never a negative one. On whole-microsecond traces the figures equal HTA's.
example: tracetui breakdown trace.json.gz --step 5 --by stream"""


def add_breakdown(sub, command: str | None) -> argparse.ArgumentParser:
    text = "print where the device's time goes: compute, communication, copies, idle, and why streams wait"
    p = one_trace(sub, "breakdown", text)
    p.epilog = EPILOG
    p.add_argument("--step", type=int, metavar="N", help="ProfilerStep#N on every rank (default: the whole trace)")
    p.add_argument(
        "--by", choices=("rank", "stream"), default="rank", help="one row per device of each rank, or per stream"
    )
    p.add_argument(
        "--idle-stats",
        action="store_true",
        help="also each stream's idle intervals per cause: count, mean, std, quartiles, max (HTA's "
        "show_idle_interval_stats; with --format csv, the only table)",
    )
    return p


def cmd_breakdown(args: argparse.Namespace) -> int:
    from ..model.analyses.breakdown import WindowMissing
    from ..reports import render_breakdown

    a = load(args.trace, args.no_cache)
    try:
        text = render_breakdown(a, args.format, args.step, args.by, args.idle_stats)
    except WindowMissing as exc:
        raise BadUsage(f"{args.trace}: {exc}") from None
    print(text)
    return 0


COMMANDS = {"breakdown": Command(add_breakdown, cmd_breakdown)}
