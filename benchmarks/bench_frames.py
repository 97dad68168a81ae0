"""Frame time of the timeline on a trace tiled to millions of events.

For many pans and zooms, at full zoom-out and zoomed in, prints the median of:
- frame: the key's action plus drawing every visible line (our Line-API work per frame);
- key press: the wall time of a key press through Textual's Pilot, less the same for a key
  bound to nothing (Pilot's own fixed wait), i.e. what Textual adds around our frame.
The 1-copy trace is the baseline measured in the same run.
Run: python benchmarks/bench_frames.py [copies]   (40 copies ~ 3 M events)
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.tile import SOURCE, tile_columns  # noqa: E402
from tui.model import load_trace  # noqa: E402
from tui.model.analyses.results import Results  # noqa: E402
from tui.model.view.lanes import LaneIndex  # noqa: E402

KEYS = ["d", "d", "a", "w", "d", "s", "a", "d"]
ACTIONS = {"d": ("pan", 1), "a": ("pan", -1), "w": ("zoom", -1), "s": ("zoom", 1)}


async def measure(analysis: Results, lanes: LaneIndex, zoom_in: int) -> tuple[float, float]:
    """Median frame ms (action + all lines) and median key-press ms above Pilot's idle wait."""
    from textual.app import App

    from tui.screens.main import MainScreen

    class Bench(App):
        CSS_PATH = str(Path(__file__).resolve().parents[1] / "tui" / "app.tcss")

        def on_mount(self) -> None:
            self.push_screen(MainScreen(analysis, lanes, "bench"))

    app = Bench()
    frame, wall, idle = [], [], []
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        tl = app.screen.timeline
        for _ in range(zoom_in):
            await pilot.press("w")
        for k in range(64):
            key = KEYS[k % len(KEYS)]
            action, arg = ACTIONS[key]
            t0 = time.perf_counter()
            getattr(tl, f"action_{action}")(arg)
            for y in range(tl.size.height):
                tl.render_line(y)
            frame.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            await pilot.press(key)
            wall.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            await pilot.press("f12")
            idle.append(time.perf_counter() - t0)
    return statistics.median(frame) * 1e3, (statistics.median(wall) - statistics.median(idle)) * 1e3


def main() -> None:
    copies = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    small = load_trace(SOURCE, use_cache=False)
    for label, trace in (("baseline: 1 copy", small), (f"{copies} copies", tile_columns(small, copies))):
        t0 = time.perf_counter()
        analysis = Results(trace)
        lanes = LaneIndex(analysis)
        analysis.links  # noqa: B018
        prep = time.perf_counter() - t0
        print(f"{label}: {trace.n:,} events (nesting, links and lane index in {prep:.2f}s)")
        for name, zoom in (("full zoom-out", 0), ("zoomed in 12x", 12)):
            frame, extra = asyncio.run(measure(analysis, lanes, zoom))
            print(
                f"  {name:14s} frame (action + all {45 - 9} lines): median {frame:6.2f} ms"
                f"   key press above Pilot's idle wait: median {extra:6.2f} ms"
            )


if __name__ == "__main__":
    main()
