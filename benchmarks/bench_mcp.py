"""The MCP server under many calls at once: 60 mixed calls made together, against the same calls made one by one.

Each side talks to `tracetui mcp` as an agent does, through the official SDK's client over stdio, a fresh server
each time: cold (an empty cache: the first calls on a trace load it) and warm (the cache written by the cold
run; the server opens each trace from it). The calls (summary, ops, kernels, search_events, sql, critical, over
the shipped BERT sample and, where ../shared is here, the 51 MB hta-2022-11-v100-ddp-memory-216k trace) are
made all at once, then one after another, alternating which side goes first. Prints per side the wall time,
the failures, when the first and the last answer came, and the median and slowest answer of the short calls
(summary) and the long ones (critical), with the ratio of together to one by one. Every answer made together
is checked against the same call made alone.
Run: python benchmarks/bench_mcp.py [--rounds 2] [--calls 60]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BERT = str(ROOT / "sample_traces" / "h100-bert-small.json.gz")
HTA = ROOT.parent / "shared" / "traces" / "hta-2022-11-v100-ddp-memory-216k" / "df_index_resolver.json.gz"
KINDS = "SELECT kind, count(*) AS n, sum(dur_us) AS us FROM events GROUP BY kind ORDER BY n DESC"


def calls(n: int) -> list[tuple[str, dict]]:
    """n calls: each trace gets summary, ops, kernels, search_events, sql and critical, round-robin."""
    traces = [BERT] + ([str(HTA)] if HTA.exists() else [])
    menu = [
        ("summary", {}),
        ("ops", {"limit": 20}),
        ("kernels", {"sort": "count"}),
        ("search_events", {"name": "gemm|memcpy", "limit": 20}),
        ("sql", {"query": KINDS}),
        ("critical", {}),
    ]
    out = []
    for k in range(n):
        tool, args = menu[k % len(menu)]
        out.append((tool, {"trace": traces[(k // len(menu)) % len(traces)], **args}))
    return out


async def session(cache: str, made: list[tuple[str, dict]], together: bool) -> dict:
    """One fresh server: the calls together or one by one; each answer with the second it came at."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    env = {**os.environ, "TRACETUI_CACHE_DIR": cache, "PYTHONPATH": str(ROOT)}
    params = StdioServerParameters(command=sys.executable, args=["-m", "tui.cli", "mcp"], env=env, cwd=str(ROOT))
    async with Client(params, read_timeout_seconds=600) as client:
        t0 = time.perf_counter()

        async def one(tool: str, args: dict) -> tuple[str, bool, object, float]:
            started = time.perf_counter()
            r = await client.call_tool(tool, args)
            answer = r.content[0].text if r.is_error else r.structured_content  # type: ignore[union-attr]
            return tool, r.is_error, answer, time.perf_counter() - (t0 if together else started)

        if together:
            got = await asyncio.gather(*(one(t, a) for t, a in made))
        else:
            got = [await one(t, a) for t, a in made]
        wall = time.perf_counter() - t0
    return {"wall": wall, "answers": got}


def line(name: str, run: dict) -> str:
    ans = run["answers"]
    when = lambda tool: sorted(a[3] for a in ans if a[0] == tool)  # noqa: E731
    fails = sum(a[1] for a in ans)
    short, long = when("summary"), when("critical")
    return (
        f"{name:28s} wall {run['wall']:6.2f} s  failed {fails:2d}/{len(ans)}"
        f"  summary median {statistics.median(short):5.2f} s, slowest {short[-1]:5.2f} s"
        f"  critical median {statistics.median(long):5.2f} s, slowest {long[-1]:5.2f} s"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--calls", type=int, default=60)
    opts = ap.parse_args()
    made = calls(opts.calls)
    print(
        f"{platform.machine()}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}, Python {platform.python_version()}"
    )
    print(f"{len(made)} calls over {len({a['trace'] for _, a in made})} traces; rounds: {opts.rounds}")
    for k in range(opts.rounds):
        sides = [True, False] if k % 2 == 0 else [False, True]
        results: dict[tuple[str, bool], dict] = {}
        for together in sides:
            cache = tempfile.mkdtemp(prefix="bench-mcp-")
            try:
                for phase in ("cold", "warm"):
                    results[(phase, together)] = asyncio.run(session(cache, made, together))
            finally:
                shutil.rmtree(cache, ignore_errors=True)
        for phase in ("cold", "warm"):
            alone, both = results[(phase, False)], results[(phase, True)]
            differ = sum(a[1:3] != b[1:3] for a, b in zip(both["answers"], alone["answers"], strict=True))
            print(line(f"round {k + 1} {phase}, one by one", alone))
            print(line(f"round {k + 1} {phase}, together", both))
            print(
                f"{'':28s} together / one by one: {both['wall'] / alone['wall']:.2f}x; answers unlike alone: {differ}"
            )


if __name__ == "__main__":
    main()
