"""The MCP server under many calls at once: 60 mixed calls made together, against the same calls made one by one.

Each side talks to `tracetui mcp` as an agent does, through the official SDK's client over stdio, a fresh server
each time: cold (an empty cache: the first calls on a trace load it) and warm (the cache written by the cold
run; the server opens each trace from it). The calls (summary, ops, kernels, search_events, sql, critical, over
the shipped BERT sample and, where ../shared is here, the 51 MB hta-2022-11-v100-ddp-memory-216k trace) are
made all at once, then one after another, alternating which side goes first. Prints per side the wall time,
the failures, when the first and the last answer came, and the median and slowest answer of the short calls
(summary) and the long ones (critical), with the ratio of together to one by one. Every answer made together
is checked against the same call made alone.
With --base REV (main, say), the calls are also made together on that commit's server, for before and after.
Run: python benchmarks/bench_mcp.py [--rounds 2] [--calls 60] [--base REV]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BERT = str(ROOT / "sample_traces" / "h100-bert-small.json.gz")
HTA = ROOT.parent / "shared" / "traces" / "hta-2022-11-v100-ddp-memory-216k" / "df_index_resolver.json.gz"
KINDS = "SELECT kind, count(*) AS n, max(dur_us) AS longest_us FROM events GROUP BY kind ORDER BY n DESC, kind"


TRACES = [BERT] + ([str(HTA)] if HTA.exists() else [])


def calls(n: int) -> list[tuple[str, dict]]:
    """n calls: each trace gets summary, ops, kernels, search_events, sql and critical, round-robin."""
    menu: list[tuple[str, dict]] = [
        ("summary", {}),
        ("ops", {"limit": 20}),
        ("kernels", {"sort": "count"}),
        ("search_events", {"name": "gemm|memcpy", "limit": 20}),
        ("sql", {"query": KINDS}),
        ("critical", {}),
    ]
    out: list[tuple[str, dict]] = []
    for k in range(n):
        tool, args = menu[k % len(menu)]
        out.append((tool, {"trace": TRACES[(k // len(menu)) % len(TRACES)], **args}))
    return out


async def session(cache: str, made: list[tuple[str, dict]], together: bool, root: Path = ROOT) -> dict:
    """One fresh server (of the code in root): the calls together or one by one; each answer with the second it
    came at."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    env = {**os.environ, "TRACETUI_CACHE_DIR": cache, "PYTHONPATH": str(root)}
    params = StdioServerParameters(command=sys.executable, args=["-m", "tui.cli", "mcp"], env=env, cwd=str(root))
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


def when(run: dict, made: list[tuple[str, dict]], tool: str, trace: str) -> str:
    """When the answers of one tool on one trace came: the median and the slowest, in seconds."""
    got = sorted(
        a[3] for a, (t, args) in zip(run["answers"], made, strict=True) if t == tool and args["trace"] == trace
    )
    return f"{statistics.median(got):5.2f} / {got[-1]:5.2f}" if got else "    -"


def report(name: str, run: dict, made: list[tuple[str, dict]]) -> str:
    fails = sum(a[1] for a in run["answers"])
    first = min(a[3] for a in run["answers"])
    cols = [when(run, made, tool, trace) for trace in TRACES for tool in ("summary", "critical")]
    return f"{name:22s} {run['wall']:6.2f} s {fails:3d}/{len(made)} {first:6.2f} s  " + "  ".join(
        f"{c:>13s}" for c in cols
    )


def compare(phase: str, alone: dict, both: dict, made: list[tuple[str, dict]]) -> None:
    """The two sides of one phase, their ratio, and any answer made together that is not the one made alone."""
    pairs = zip(both["answers"], alone["answers"], strict=True)
    differ = [k for k, (a, b) in enumerate(pairs) if a[1:3] != b[1:3]]
    print(report(f"{phase}, one by one", alone, made))
    print(report(f"{phase}, together", both, made))
    print(f"{'':22s} together / one by one: {both['wall'] / alone['wall']:.2f}x; answers unlike alone: {len(differ)}")
    for k in differ:
        print(f"  {made[k]}: together {str(both['answers'][k][2])[:500]}\n  alone {str(alone['answers'][k][2])[:500]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--calls", type=int, default=60)
    ap.add_argument("--base", help="also make the calls together on this commit's server (e.g. main), for before/after")
    opts = ap.parse_args()
    made = calls(opts.calls)
    load = os.getloadavg()[0]
    print(f"{platform.machine()}, {os.cpu_count()} cores, load average {load:.1f}, Python {platform.python_version()}")
    print(f"{len(made)} calls over {len(TRACES)} traces, {opts.rounds} rounds; answers: median / slowest, in s")
    heads = [f"{tool} {Path(t).name[:10]}" for t in TRACES for tool in ("summary", "critical")]
    print(f"{'':22s} {'wall':>8s} {'failed':>6s} {'first':>8s}  " + "  ".join(f"{h:>13s}" for h in heads))
    for r in range(opts.rounds):
        sides = [True, False] if r % 2 == 0 else [False, True]
        results: dict[tuple[str, bool], dict] = {}
        for together in sides:
            cache = tempfile.mkdtemp(prefix="bench-mcp-")
            try:
                for phase in ("cold", "warm"):
                    results[(phase, together)] = asyncio.run(session(cache, made, together))
            finally:
                shutil.rmtree(cache, ignore_errors=True)
        base = run_base(opts.base, made) if opts.base else {}
        for phase in ("cold", "warm"):
            compare(f"{r + 1} {phase}", results[(phase, False)], results[(phase, True)], made)
            if phase in base:
                print(report(f"{r + 1} {phase}, {opts.base} together", base[phase], made))
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


def run_base(rev: str, made: list[tuple[str, dict]]) -> dict[str, dict]:
    """The calls together, cold then warm, on the server of another commit (its tree exported, not checked out)."""
    scratch = Path(tempfile.mkdtemp(prefix="bench-mcp-base-"))
    try:
        tree = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(scratch)], input=tree, check=True)
        cache = str(scratch / "cache")
        return {phase: asyncio.run(session(cache, made, True, scratch)) for phase in ("cold", "warm")}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
