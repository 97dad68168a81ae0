"""The viewer on one trace, headless: when the timeline is first drawn, when the background work is done, the
steady RSS, and how long each key takes. Run by bench_big.py in a fresh process; prints one fact per line.

python benchmarks/viewer_probe.py TRACE START_EPOCH [--no-cache]
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# The keys a user presses on the timeline and in the views; f12 is bound to nothing (Pilot's own wait).
KEYS = [
    "w",
    "w",
    "d",
    "a",
    "l",
    "l",
    "j",
    "k",
    "]",
    "[",
    "enter",
    "m",
    "m",
    "s",
    "0",
    "2",
    "3",
    "c",
    "b",
    "4",
    "5",
    "1",
]


def _rss_split() -> str:
    """Anonymous vs file-backed resident memory (mapped cache columns are file-backed)."""
    fields = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("RssAnon", "RssFile")):
                key, value = line.split(":")
                fields[key] = int(value.split()[0]) * 1024
    return " ".join(f"{k}={v / 1e6:.0f}MB" for k, v in fields.items())


class LagMonitor:
    """The longest the event loop went without running a 5 ms ticker: how long the UI was frozen."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._task: asyncio.Task | None = None

    async def _tick(self) -> None:
        last = time.perf_counter()
        while True:
            await asyncio.sleep(0.005)
            now = time.perf_counter()
            self.worst = max(self.worst, now - last - 0.005)
            last = now

    def start(self) -> None:
        self.worst = 0.0
        self._task = asyncio.get_running_loop().create_task(self._tick())

    def stop(self) -> float:
        if self._task:
            self._task.cancel()
        return self.worst


async def main(trace: str, start: float, use_cache: bool) -> None:
    import psutil

    from tui.app import TraceApp
    from tui.widgets.timeline import Timeline

    painted: list[float] = []
    render = Timeline.render_line

    def first_render(self, y):
        if not painted:
            painted.append(time.time())
        return render(self, y)

    Timeline.render_line = first_render  # type: ignore[method-assign]
    app = TraceApp([trace], use_cache=use_cache)
    async with app.run_test(size=(160, 45)) as pilot:
        while not painted:
            if app.load_error is not None:
                raise SystemExit(f"load failed: {app.load_error}")
            await pilot.pause(0.005)
        print(f"paint {painted[0] - start:.3f}", flush=True)
        await app.workers.wait_for_complete()
        await pilot.pause()
        print(f"settled {time.time() - start:.3f}", flush=True)
        print(f"rss {psutil.Process().memory_info().rss}", flush=True)
        print(f"rss-split {_rss_split()}", flush=True)
        idle = []
        for _ in range(5):
            t0 = time.perf_counter()
            await pilot.press("f12")
            idle.append(time.perf_counter() - t0)
        base = statistics.median(idle)
        lag = LagMonitor()
        for key in KEYS:
            t0 = time.perf_counter()
            lag.start()
            await pilot.press(key)
            await pilot.pause(0.05)
            frozen = lag.stop()
            print(f"key {key} {(time.perf_counter() - t0 - base) * 1000:.1f} frozen {frozen * 1000:.1f}", flush=True)
            await app.workers.wait_for_complete()  # a range aggregate runs in a worker, off the UI


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], float(sys.argv[2]), "--no-cache" not in sys.argv))
