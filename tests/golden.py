"""Golden outputs of the headless commands on every sample and shared trace, one text file each.

Layout: tests/data/golden/<trace id>/<command>.txt holds exactly what run() returned (UTF-8, LF), so a
review reads a changed output as a text diff. The trace id is the trace's path under sample_traces
(samples/...) or ../shared/traces (shared/...); a folder of ranks has its own commands' files beside the
folders of its rank files. The diffs of two samples are kept under diff/<pair>/.

The golden test (tests/project/test_golden.py) runs the same commands and compares byte for byte, so a refactor
cannot change a number unnoticed. When an output changes on purpose, regenerate and review the diff:

    python tests/golden.py --update [SUBSTRING ...]   (then `git status tests/data` and `git diff tests/data`)

--update runs only the goldens whose key ("<trace id> :: <command>") contains one of the substrings (every
golden when none is given), only for the traces present; it never deletes a golden it did not run.
"""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

from tui.cli.commands import GROUPS, REPORTS

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "traces"
GOLDEN_DIR = ROOT / "tests" / "data" / "golden"
SEP = " :: "

# Every report of one trace, plain (in --help's order; a new command gets a golden without a line here), and the
# variants pinned beside them. A folder of ranks adds ranks; the pairs of PAIRS are diff's.
VARIANTS = {
    "summary-json": ["summary", "--format", "json"],
    "ops-json": ["ops", "--format", "json"],
    "ops-shapes-json": ["ops", "--group-by-shape", "--format", "json"],
    "kernels-json": ["kernels", "--format", "json"],
    "explain-json": ["explain", "--format", "json"],
    "ops-python-frames": ["ops", "--python-frames"],
    "code-json": ["code", "--format", "json", "--all-frames"],
    "memory-json": ["memory", "--format", "json"],
    "roofline-json": ["roofline", "--format", "json"],
    "breakdown-json": ["breakdown", "--format", "json", "--by", "stream"],
    "kernels-queues": ["kernels", "--queues"],
    "ops-kernels": ["ops", "--kernels"],
    "kernels-sequences": ["kernels", "--sequences"],
}
COMMANDS = {c: [c] for c in GROUPS if c in REPORTS - {"ranks", "diff"}} | VARIANTS
FOLDER_COMMANDS = {"ranks": ["ranks", "--workers", "1"], "ranks-json": ["ranks", "--format", "json", "--workers", "1"]}
SNAPSHOT_COMMANDS = {
    "memory": ["memory"],
    "memory-json": ["memory", "--format", "json"],
    "memory-csv": ["memory", "--format", "csv"],
}
SNAPSHOTS = ROOT / "tests" / "data" / "snapshots"  # allocator snapshots: memory SNAPSHOT (snapshots/<file>)

PAIRS = {
    "diff/a100-control-vs-v100-cudagraph": ("a100-train-control.json.gz", "v100-cudagraph-test.json.gz"),
    "diff/cpu-eager-vs-compiled": ("cpu/matmul_add_64_warm_eager.json.gz", "cpu/matmul_add_64_warm_compiled.json.gz"),
    "diff/snapshot-leak-vs-leak-more": (
        "../tests/data/snapshots/leak.pickle",
        "../tests/data/snapshots/leak-more.pickle",
    ),
}
DIFF_COMMANDS = ("text", "json")


def commands(path: Path) -> dict[str, list[str]]:
    """The commands pinned for a trace: the per-trace set, and for a folder of ranks the ranks report too; an
    allocator snapshot's memory report."""
    if is_snapshot(path):
        return SNAPSHOT_COMMANDS
    return COMMANDS | (FOLDER_COMMANDS if path.is_dir() else {})


def is_snapshot(f: Path) -> bool:
    return f.is_file() and f.name.endswith((".pickle", ".pickle.gz"))


def _is_trace(f: Path) -> bool:
    return f.is_file() and f.name.endswith((".json", ".gz"))


def traces() -> dict[str, Path]:
    """Id -> path: the shipped samples, then the shared set where present.

    Each shared folder gives its top-level trace files (.json, .gz), and, if it has more than one, itself as
    a folder of ranks. A subfolder (such as a replay's capture_traces/) gives its gzipped traces (.json.gz),
    each on its own; that leaves out side notes such as execution_details.json, and a subfolder is never
    a folder of ranks.
    """
    out = {
        f"samples/{p.relative_to(ROOT / 'sample_traces')}": p
        for p in sorted((ROOT / "sample_traces").rglob("*.json.gz"))
        if "cuda-h200" not in p.parts  # the shared cuda-h200-series, pinned there; test_ops_h200.py holds them to torch
    }
    out["samples/hta-2rank"] = ROOT / "sample_traces" / "hta-2rank"
    out.update({f"snapshots/{p.name}": p for p in sorted(SNAPSHOTS.iterdir()) if is_snapshot(p)})
    if SHARED.is_dir():
        for d in sorted(p for p in SHARED.iterdir() if p.is_dir()):
            files = sorted(f for f in d.iterdir() if _is_trace(f))
            if len(files) > 1:
                out[f"shared/{d.name}"] = d
            out.update({f"shared/{d.name}/{f.name}": f for f in files})
            out.update({f"shared/{d.name}/{f.name}": f for f in sorted(d.iterdir()) if is_snapshot(f)})
            nested = sorted(f for sub in d.iterdir() if sub.is_dir() for f in sub.glob("*.json.gz") if f.is_file())
            out.update({f"shared/{f.relative_to(SHARED)}": f for f in nested})
    return out


def run(argv: list[str]) -> str:
    from tui.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return f"exit {code}\n{err.getvalue()}---\n{out.getvalue()}"


def jobs(cache: bool = False) -> dict[str, tuple[list[str], dict[str, str]]]:
    """Key -> (argv, {path: placeholder}) of every golden that can run here: the diffs, then every present trace's."""
    got = {}
    for pair, (a, b) in PAIRS.items():
        pa, pb = (str(ROOT / "sample_traces" / p) for p in (a, b))
        for fmt in DIFF_COMMANDS:
            got[f"{pair}{SEP}{fmt}"] = (["diff", pa, pb, "--format", fmt, "--no-cache"], {pa: "<A>", pb: "<B>"})
    flags = [] if cache else ["--no-cache"]
    for tid, path in traces().items():
        for cid, argv in commands(path).items():
            where = {str(path): "<TRACE>", f"{path.parent}/": "<FOLDER>/"}  # a capture found beside the trace
            got[f"{tid}{SEP}{cid}"] = ([argv[0], str(path), *argv[1:], *flags], where)
    return got


def outputs(only: set[str] | None = None, cache: bool = False) -> dict[str, str]:
    """Each selected key's output (all when only is None); with cache, through the on-disk cache."""
    got = {}
    for key, (argv, placeholders) in jobs(cache).items():
        if only is None or key in only:
            text = run(argv)
            for path, placeholder in placeholders.items():
                text = text.replace(path, placeholder)
            got[key] = text
    return got


def diff_outputs() -> dict[str, str]:
    return outputs({f"{pair}{SEP}{fmt}" for pair in PAIRS for fmt in DIFF_COMMANDS})


def golden_path(key: str) -> Path:
    tid, cid = key.split(SEP)
    return GOLDEN_DIR / tid / f"{cid}.txt"


def recorded() -> list[str]:
    """The ids that have goldens: every folder under GOLDEN_DIR with a .txt file directly in it."""
    return sorted({f.parent.relative_to(GOLDEN_DIR).as_posix() for f in GOLDEN_DIR.rglob("*.txt") if f.is_file()})


def load_golden(tid: str) -> dict[str, str]:
    """Command -> golden output of one trace id (or diff pair); empty when none is recorded."""
    folder = GOLDEN_DIR / tid
    if not folder.is_dir():
        return {}
    return {f.name.removesuffix(".txt"): f.read_bytes().decode() for f in sorted(folder.glob("*.txt")) if f.is_file()}


def update(substrings: list[str]) -> dict[str, int]:
    """Run the goldens whose key contains a substring (all when none) and write those that changed."""
    selected = {k for k in jobs() if not substrings or any(s in k for s in substrings)}
    counts = {"changed": 0, "added": 0, "unchanged": 0}
    for key, text in outputs(selected).items():
        path, data = golden_path(key), text.encode()
        old = path.read_bytes() if path.is_file() else None
        if old == data:
            counts["unchanged"] += 1
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        counts["added" if old is None else "changed"] += 1
    return counts


def main(argv: list[str]) -> int:
    if not argv or argv[0] != "--update":
        print(__doc__)
        return 2
    counts = update(argv[1:])
    print(
        f"{GOLDEN_DIR.relative_to(ROOT)}: {counts['changed']} rewritten, {counts['added']} added, "
        f"{counts['unchanged']} unchanged; no others touched"
    )
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main(sys.argv[1:]))
