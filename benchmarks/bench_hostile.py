"""Hostile and absurd files (issue 43): the six of the issue, lanes by the hundred thousand, names by the megabyte.

Each command runs in a fresh process (wall time, peak RSS of its tree, its one line), against a baseline measured
in the same run: `summary --no-cache` of the shipped h100-bert-small sample. With --base REV the same commands run
from that commit too (a git worktree), each cut off after --timeout seconds. Lanes: 25k to 200k pid/tid pairs,
`summary --no-cache`, cached `summary` and the viewer (first paint, every analysis done, each key of a tour), per
lane against the smallest. Names: interning (a dict lookup, which hashes it), short_name, shorten_names and the
timeline's label of one name of 64 KB to 16 MB, per MB.

Run: python benchmarks/bench_hostile.py [--keep DIR] [--base REV] [--timeout S] [--skip-viewer]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.probe import ROOT, environment, tree_rss  # noqa: E402

BERT = ROOT / "sample_traces" / "h100-bert-small.json.gz"


def _x(name: str, ts: float, dur: float, **more) -> dict:
    return {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur, **more}


def make_files(folder: Path) -> dict[str, Path]:
    """The issue's six files (and their sizes as it gives them)."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {k: folder / f for k, f in [("deep args", "deep.json"), ("50 MB name", "name.json"),
             ("NaN, Infinity", "nan.json"), ("1e30, -dur, 1e40 id", "range.json"),
             ("2 MB gzip bomb", "bomb.json.gz"), ("200,000 lanes", "lanes-200000.json")]}  # fmt: skip
    if not files["deep args"].exists():
        deep = "[" * 100_000 + "]" * 100_000
        files["deep args"].write_text(
            '{"traceEvents":[' + json.dumps(_x("a", 1, 2))[:-1] + f',"args":{{"x":{deep}}}}}]}}'
        )
        files["50 MB name"].write_text(json.dumps({"traceEvents": [_x("a" * (50 << 20), 1, 2)]}))
        files["NaN, Infinity"].write_text(
            '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":NaN,"dur":Infinity}]}'
        )
        files["1e30, -dur, 1e40 id"].write_text(
            '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1e30,"dur":-5,"args":{"External id":1'
            + "0" * 40
            + '}},{"ph":"X","name":"b","pid":1,"tid":1,"ts":5,"dur":3}]}'
        )
        _bomb(files["2 MB gzip bomb"], 2 << 30)
    lanes(folder, 200_000)
    return files


def _bomb(path: Path, inflated: int) -> None:
    """`{"traceEvents":[` + blanks + `]}` gzipped: one full-flush deflate segment of 16 MB of blanks, repeated."""
    block = b" " * (16 << 20)
    raw = zlib.compressobj(6, zlib.DEFLATED, -15)
    head = raw.compress(b'{"traceEvents":[') + raw.flush(zlib.Z_FULL_FLUSH)
    middle = raw.compress(block) + raw.flush(zlib.Z_FULL_FLUSH)
    tail = raw.compress(b"]}") + raw.flush()
    count, crc = inflated // len(block), zlib.crc32(b'{"traceEvents":[')
    for _ in range(count):
        crc = zlib.crc32(block, crc)
    crc = zlib.crc32(b"]}", crc)
    with open(path, "wb") as f:
        f.write(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + head + middle * count + tail)
        f.write(crc.to_bytes(4, "little") + ((18 + count * len(block)) & 0xFFFFFFFF).to_bytes(4, "little"))


def lanes(folder: Path, n: int) -> Path:
    """n pid/tid pairs, one event each (about 100 bytes per lane)."""
    path = folder / f"lanes-{n}.json"
    if not path.exists():
        events = [{"ph": "X", "cat": "cpu_op", "name": "op", "pid": k, "tid": k, "ts": k, "dur": 5} for k in range(n)]
        path.write_text(json.dumps({"traceEvents": events}))
    return path


def measure(argv: list[str], env: dict, timeout: float) -> tuple[float, float, int | None, str]:
    """Wall seconds, peak RSS (GB) of the process tree, the exit code (None: cut off at timeout), stderr's first line.
    It runs in the tree on PYTHONPATH (`python -m` puts the working directory first on the path)."""
    t0 = time.perf_counter()
    child = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env, cwd=env.get("PYTHONPATH")
    )
    proc, peak = psutil.Process(child.pid), 0
    while child.poll() is None and time.perf_counter() - t0 < timeout:
        peak = max(peak, tree_rss(proc))
        time.sleep(0.02)
    code = child.poll()
    if code is None:
        for p in [*proc.children(recursive=True), proc]:
            p.kill()
    err = child.communicate()[1]
    return time.perf_counter() - t0, peak / 1e9, code, (err.strip().splitlines() or [""])[0]


def tracetui_env(tree: Path, cache: Path) -> dict:
    return {**environment(cache), "PYTHONPATH": str(tree)}


def six(files: dict[str, Path], trees: dict[str, Path], scratch: Path, timeout: float) -> None:
    print("\nThe issue's six files: summary --no-cache (fresh process), against the bert sample in the same run")
    for side, tree in trees.items():
        env = tracetui_env(tree, scratch / f"cache-{side}")
        base, base_gb, _, _ = measure([sys.executable, "-m", "tui", "summary", str(BERT), "--no-cache"], env, timeout)
        print(f"  [{side}] baseline: bert sample {base:.2f} s, peak {base_gb * 1e3:.0f} MB")
        for what, path in files.items():
            s, gb, code, line = measure([sys.executable, "-m", "tui", "summary", str(path), "--no-cache"], env, timeout)
            said = f"exit {code}" if code is not None else f"no answer within {timeout:.0f} s"
            line = line.replace(str(path.parent) + "/", "")
            print(f"  [{side}] {what:20} {s:6.2f} s = {s / base:5.1f}x, peak {gb * 1e3:5.0f} MB, {said}: {line[:150]}")


def lane_scaling(folder: Path, scratch: Path, timeout: float, viewer: bool) -> None:
    print("\nLanes: pid/tid pairs, one event each; per lane against the 25,000-lane file in the same run")
    env = tracetui_env(ROOT, scratch / "cache-lanes")
    first: dict[str, float] = {}
    for n in (25_000, 50_000, 100_000, 200_000):
        path = lanes(folder, n)
        cold, gb, _, _ = measure([sys.executable, "-m", "tui", "summary", str(path), "--no-cache"], env, timeout)
        measure([sys.executable, "-m", "tui", "summary", str(path)], env, timeout)  # writes the cache
        warm, _, _, _ = measure([sys.executable, "-m", "tui", "summary", str(path)], env, timeout)
        row = {"cold": cold, "cached": warm}
        if viewer:
            row.update(_viewer(path, env))
        first = first or {k: v / n for k, v in row.items()}
        cells = ", ".join(f"{k} {v:.2f} s ({v / n / first[k]:.2f}x per lane)" for k, v in row.items())
        print(f"  {n:>7,} lanes: {cells}; cold peak {gb * 1e3:.0f} MB")


def _viewer(path: Path, env: dict) -> dict[str, float]:
    """The viewer on the cached file: first paint, every analysis done (seconds), and the slowest key (ms, held)."""
    probe = ROOT / "benchmarks" / "viewer_probe.py"
    out = subprocess.run(
        [sys.executable, str(probe), str(path), repr(time.time())], env=env, capture_output=True, text=True, check=True
    ).stdout
    facts, keys = {}, []
    for line in out.splitlines():
        word, *rest = line.split()
        if word in ("paint", "settled"):
            facts[word] = float(rest[0])
        elif word == "key":
            keys.append((rest[0], float(rest[3])))
    worst = max(keys, key=lambda kv: kv[1])
    print(f"    viewer keys (held ms): {' '.join(f'{k}={v:.0f}' for k, v in keys)}; slowest {worst[0]}")
    return facts


def names() -> None:
    print("\nNames: one name of N bytes, in this process, ms per MB (linear: the same at every size)")
    from tui.text.names import short_name, shorten_names
    from tui.widgets.timeline import short_label

    kinds = {
        "one word": lambda n: "a" * n,
        "C++ args": lambda n: "void k<" + ", ".join(f"A<B{k}<int>>" for k in range(n // 12)) + ">(float)",
        "C++ deep": lambda n: "void f<" * (n // 8) + "int" + ">" * (n // 8) + "(float)",
    }
    for kind, make in kinds.items():
        for size in (64 << 10, 1 << 20, 16 << 20):
            name = make(size)
            mb = len(name) / 1e6
            cells = []
            for what, fn in (
                ("intern", lambda n: {}.setdefault(n[:-1] + "x", 0)),
                ("short_name", lambda n: short_name(n, 100)),
                ("shorten_names", lambda n: shorten_names([n, n + "y"], 60)),
                ("timeline label", lambda n: short_label(n, 40)),
            ):
                t0 = time.perf_counter()
                fn(name)
                cells.append(f"{what} {(time.perf_counter() - t0) * 1e3 / mb:7.2f}")
            print(f"  {kind:9} {len(name):>11,} bytes: " + ", ".join(cells))


def main() -> None:
    opts = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    opts.add_argument("--keep", type=Path, help="make (or reuse) the files here")
    opts.add_argument("--base", help="a commit to run the six files from too")
    opts.add_argument("--timeout", type=float, default=120.0)
    opts.add_argument("--skip-viewer", action="store_true")
    args = opts.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="tracetui-hostile-"))
    folder = args.keep or scratch / "files"
    files = make_files(folder)
    trees = {"now": ROOT}
    if args.base:
        trees = {"before": scratch / "base", **trees}
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(trees["before"]), args.base],
            check=True,
            capture_output=True,
        )
    try:
        six(files, trees, scratch, args.timeout)
        lane_scaling(folder, scratch, args.timeout, not args.skip_viewer)
        names()
    finally:
        if args.base:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(trees["before"])], check=False)


if __name__ == "__main__":
    main()
