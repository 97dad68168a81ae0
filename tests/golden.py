"""Golden outputs of the headless commands on every sample and shared trace.

The golden test (tests/test_golden.py) runs the same commands and compares byte for byte, so a
refactor cannot change a number unnoticed. When an output changes on purpose, regenerate and
review the diff:  python tests/golden.py --update   (then `git diff --stat tests/data`).
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "traces"
GOLDEN = ROOT / "tests" / "data" / "golden.json.gz"

COMMANDS = {
    "summary": ["summary"],
    "summary-json": ["summary", "--format", "json"],
    "ops": ["ops"],
    "ops-json": ["ops", "--format", "json"],
    "ops-shapes-json": ["ops", "--group-by-shape", "--format", "json"],
    "kernels": ["kernels"],
    "kernels-json": ["kernels", "--format", "json"],
    "explain": ["explain"],
    "explain-json": ["explain", "--format", "json"],
    "ops-hide-python": ["ops", "--hide-python"],
    "code": ["code"],
    "code-json": ["code", "--format", "json", "--all-frames"],
    "memory": ["memory"],
    "memory-json": ["memory", "--format", "json"],
}
FOLDER_COMMANDS = {"ranks": ["ranks", "--workers", "1"], "ranks-json": ["ranks", "--format", "json", "--workers", "1"]}


def commands(path: Path) -> dict[str, list[str]]:
    """The commands pinned for a trace: the per-trace set, and for a folder of ranks the ranks report too."""
    return COMMANDS | (FOLDER_COMMANDS if path.is_dir() else {})


def traces() -> dict[str, Path]:
    """Id -> path: the shipped samples, then the shared set (files and rank folders) where present."""
    out = {
        f"samples/{p.relative_to(ROOT / 'sample_traces')}": p
        for p in sorted((ROOT / "sample_traces").rglob("*.json.gz"))
    }
    out["samples/hta-2rank"] = ROOT / "sample_traces" / "hta-2rank"
    if SHARED.is_dir():
        for d in sorted(p for p in SHARED.iterdir() if p.is_dir()):
            files = sorted(f for f in d.iterdir() if f.name.endswith((".json", ".gz")))
            if len(files) > 1:
                out[f"shared/{d.name}"] = d
            out.update({f"shared/{d.name}/{f.name}": f for f in files})
    return out


def run(argv: list[str]) -> str:
    from tui.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return f"exit {code}\n{err.getvalue()}---\n{out.getvalue()}"


PAIRS = {
    "diff a100-control v100-cudagraph": ("a100-train-control.json.gz", "v100-cudagraph-test.json.gz"),
    "diff cpu eager compiled": ("cpu/matmul_add_64_warm_eager.json.gz", "cpu/matmul_add_64_warm_compiled.json.gz"),
}


def diff_outputs() -> dict[str, str]:
    got = {}
    for name, (a, b) in PAIRS.items():
        pa, pb = (str(ROOT / "sample_traces" / p) for p in (a, b))
        for fmt in ("text", "json"):
            got[f"{name} :: {fmt}"] = (
                run(["diff", pa, pb, "--format", fmt, "--no-cache"]).replace(pa, "<A>").replace(pb, "<B>")
            )
    return got


def outputs(only: set[str] | None = None, cache: bool = False) -> dict[str, str]:
    """Each command's output; with cache, through the on-disk cache (derived data read back where stored)."""
    got = diff_outputs() if only is None else {}
    flags = [] if cache else ["--no-cache"]
    for tid, path in traces().items():
        for cid, argv in commands(path).items():
            key = f"{tid} :: {cid}"
            if only is None or key in only:
                got[key] = run([argv[0], str(path), *argv[1:], *flags]).replace(str(path), "<TRACE>")
    return got


def load_golden() -> dict[str, str]:
    return json.loads(gzip.decompress(GOLDEN.read_bytes()))


def main() -> int:
    if "--update" not in sys.argv:
        print(__doc__)
        return 2
    GOLDEN.write_bytes(gzip.compress(json.dumps(outputs(), indent=0, sort_keys=True).encode(), 9, mtime=0))
    print(f"wrote {GOLDEN} ({GOLDEN.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
