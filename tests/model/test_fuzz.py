"""Fuzzing the loader with structure-aware mutations of real traces: cut, duplicate, reorder, retype a field, nest,
inflate, and the top level damaged. Every case ends in a result or one line (TraceError, UsageError), never a
traceback, within a time budget per file and under a memory bound (issue 43).

Each case is written to a file and opened in a worker process through the API (the front door every caller uses),
then summarized, tabled as text (names cut to a width), and a few events' args read. The worker runs case after
case; this process waits at most BUDGET_S for each answer and kills the worker past it. A failure names its seed:
`python tests/model/test_fuzz.py SEED` writes that case's file and runs it here, traceback and all.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import re
import select
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, SAMPLES, SHARED

CI_SEEDS = 300
SOAK_SEEDS = 5000
BUDGET_S = 30.0  # per file, on a busy CI machine (the cases take 0.01-0.5 s on a quiet one)
MEMORY_BOUND = 800e6  # the worker's peak RSS over every case (a case's trace is at most a few MB)
SOURCES = [  # small real traces of every era and vendor (the mutations run in Python, on their events)
    SAMPLES / "cpu-only-gloo.json.gz",
    SAMPLES / "a100-triton-small.json.gz",
    SAMPLES / "b300-moe-small.json.gz",
    SAMPLES / "mi250-rocm-train.json.gz",
    SAMPLES / "v100-2021-small.json.gz",
    SHARED / "hta-2024-02-a100-cuda-event-sync" / "event_sync_trace.json.gz",
    SHARED / "kineto-2021-05-tbplugin-counter-events" / "gpu_metrics_input.json",
]
_DOCS: dict[Path, object] = {}


def _doc(path: Path) -> object:
    if path not in _DOCS:
        opener = gzip.open if path.read_bytes()[:2] == b"\x1f\x8b" else open
        with opener(path, "rt") as f:
            _DOCS[path] = json.load(f)
    return json.loads(json.dumps(_DOCS[path]))  # a fresh copy to mutate


_ODD_VALUES = [
    None, True, -1, 0, 2**63, 2**64 + 7, -(2**70), 10**30, 1e300, -1e-300, 0.5, "", "NaN", "12", "x" * 300,
    [], {}, [1, [2, [3]]], {"a": {"b": 1}}, "\u0000\ud800", 3.7, -5,
]  # fmt: skip
_FIELDS = ["ph", "ts", "dur", "name", "cat", "pid", "tid", "id", "args", "s", "bp"]
_ARGS = ["External id", "correlation", "Python id", "Python parent id", "Input Dims", "Bytes", "Device Type",
         "Total Allocated", "name", "labels", "sort_index", "stream", "grid"]  # fmt: skip


def _events(doc) -> list:
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    return events if isinstance(events, list) else []


def _deep(depth: int, rng: random.Random) -> str:
    """A placeholder for a value nested `depth` levels deep (json.dumps would recurse): see _nested."""
    return f"@@DEEP{depth}{rng.choice('[{')}@@"


_DEEP = re.compile(rb'"@@DEEP(\d+)([\[{])@@"')


def _nested(text: bytes) -> bytes:
    """The text with each placeholder written out: arrays, or objects, `depth` levels deep."""

    def write(m: re.Match) -> bytes:
        depth = int(m.group(1))
        return b"[" * depth + b"1" + b"]" * depth if m.group(2) == b"[" else b'{"k":' * depth + b"1" + b"}" * depth

    return _DEEP.sub(write, text)


def _mutate_events(events: list, rng: random.Random) -> None:
    """One structure-aware change to the events, in place."""
    if not events:
        events.append({"ph": "X", "name": "a", "ts": 1, "dur": 1, "pid": 1, "tid": 1})
    k = rng.randrange(len(events))
    ev = events[k] if isinstance(events[k], dict) else {}
    kind = rng.choice(["cut", "duplicate", "reorder", "retype", "retype_arg", "nest", "inflate", "lanes", "drop"])
    if kind == "cut":
        del events[rng.randrange(len(events)) :]
    elif kind == "duplicate":
        a = rng.randrange(len(events))
        events[a:a] = events[a : a + rng.randint(1, 50)] * rng.randint(1, 20)
    elif kind == "reorder":
        rng.shuffle(events)
    elif kind == "retype":
        ev[rng.choice(_FIELDS)] = rng.choice(_ODD_VALUES)
    elif kind == "retype_arg":
        args = ev.setdefault("args", {}) if isinstance(ev.get("args", {}), dict) else {}
        args[rng.choice(_ARGS)] = rng.choice(_ODD_VALUES)
    elif kind == "nest":
        target = ev.setdefault("args", {}) if isinstance(ev.get("args"), dict) else ev
        target[rng.choice(_ARGS)] = _deep(rng.choice([3, 70, 300, 1500, 20_000]), rng)
    elif kind == "inflate":
        what = rng.choice(["name", "cat", "args"])
        blob = rng.choice("ab<(>),: ") * rng.choice([1000, 70_000, 400_000])
        if what == "args":
            ev["args"] = {"blob": blob, "Input Dims": [[len(blob)]] * rng.randint(1, 3000)}
        else:
            ev[what] = blob
    elif kind == "lanes":
        for e in events:
            if isinstance(e, dict) and rng.random() < 0.5:
                e["pid"], e["tid"] = rng.randrange(10**6), rng.choice([rng.randrange(10**6), "stream 7", -3])
    else:
        ev.pop(rng.choice(_FIELDS), None)
    if ev and k < len(events) and not isinstance(events[k], dict):
        events[k] = ev


def _mutate_top(doc, rng: random.Random) -> object:
    """Now and then, damage around the events: the top level's other keys, or the array's type."""
    if not isinstance(doc, dict) or rng.random() > 0.15:
        return doc
    key = rng.choice(["baseTimeNanoseconds", "deviceProperties", "distributedInfo", "traceEvents", "schemaVersion"])
    doc[key] = rng.choice(_ODD_VALUES + [_deep(2000, rng), {"rank": 2**40}, [{"name": "x" * 100_000}]])
    return doc


def case(seed: int, folder: Path) -> Path:
    """The file of one seed: a real trace, mutated 1-4 times, written as JSON (cut or NaN'd as text now and then),
    gzipped now and then (a gzip cut too)."""
    rng = random.Random(seed)
    sources = [s for s in SOURCES if s.exists()]
    doc = _doc(sources[seed % len(sources)])
    for _ in range(rng.randint(1, 4)):
        _mutate_events(_events(doc), rng)
    doc = _mutate_top(doc, rng)
    text = _nested(json.dumps(doc).encode())
    if rng.random() < 0.15:  # a number JSON cannot write, as some writers do anyway
        text = text.replace(b'"ts": ', rng.choice([b'"ts": NaN, "x": ', b'"ts": Infinity, "x": ', b'"ts": -']), 1)
    if rng.random() < 0.15:
        text = text[: rng.randrange(len(text) + 1)]
    gz = rng.random() < 0.25
    if gz:
        text = gzip.compress(text, 1)
        if rng.random() < 0.2:
            text = text[: rng.randrange(len(text) + 1)]
    path = folder / f"case-{seed}.json{'.gz' if gz else ''}"
    path.write_bytes(text)
    return path


_WORKER = r"""
import json, os, sys, traceback
os.environ["TRACETUI_COLUMNS"] = "100"
import tracetui
from tui.model.load.args import event_args
from tui.reports import render_ops, render_summary


def peak():
    with open("/proc/self/status") as f:
        return int(f.read().split("VmHWM:")[1].split()[0]) * 1024


def run(path):
    try:
        t = tracetui.load(path, cache=False)
        a = t.results
        render_summary(a, "text"), render_ops(a, "text", None, 0, False), t.kernels(), t.steps()
        for i in range(0, a.trace.n, max(1, a.trace.n // 7)):
            json.dumps(event_args(a.trace, i))
        return {"ok": True, "said": t.warnings}
    except (tracetui.TraceError, tracetui.UsageError) as exc:
        return {"ok": True, "line": str(exc)}
    except BaseException:
        return {"ok": False, "traceback": traceback.format_exc()}


for line in sys.stdin:
    out = run(line.strip())
    out["peak"] = peak()
    print(json.dumps(out), flush=True)
"""


class Worker:
    """A process that opens case after case; killed and restarted when one runs past the budget."""

    def __init__(self, cache: Path) -> None:
        env = {**os.environ, "TRACETUI_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT), "PYTHONWARNINGS": "error"}
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True
        )

    def ask(self, path: Path, budget: float) -> dict | None:
        """The worker's answer for one file, or None when it gave none within budget (the worker is then killed)."""
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(f"{path}\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], budget)
        line = self.proc.stdout.readline() if ready else ""
        if not line:
            self.close()
            return None
        return json.loads(line)

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe:
                pipe.close()


def _fuzz(seeds: range, tmp_path: Path, cache: Path) -> None:
    worker = Worker(cache)
    most = 0
    try:
        for seed in seeds:
            path = case(seed, tmp_path)
            answer = worker.ask(path, BUDGET_S)
            if answer is None:
                pytest.fail(f"seed {seed}: no answer within {BUDGET_S:.0f} s (python tests/model/test_fuzz.py {seed})")
            assert answer["ok"], f"seed {seed} (python tests/model/test_fuzz.py {seed}):\n{answer['traceback']}"
            if "line" in answer:
                assert "\n" not in answer["line"] and answer["line"].startswith(str(path)), (seed, answer["line"])
            assert all("\n" not in w for w in answer.get("said", [])), (seed, answer["said"])
            most = max(most, answer["peak"])
            assert answer["peak"] < MEMORY_BOUND, f"seed {seed}: peak RSS {answer['peak'] / 1e6:.0f} MB"
            path.unlink()
    finally:
        worker.close()


def test_mutated_real_traces_load_or_say_why_in_one_line(tmp_path, isolated_cache):
    _fuzz(range(CI_SEEDS), tmp_path, isolated_cache)


@pytest.mark.soak
def test_many_more_mutated_traces(tmp_path, isolated_cache):
    _fuzz(range(CI_SEEDS, CI_SEEDS + SOAK_SEEDS), tmp_path, isolated_cache)


if __name__ == "__main__":  # one seed, here, with its traceback: python tests/model/test_fuzz.py SEED
    import tempfile

    sys.path.insert(0, str(ROOT))
    import tracetui

    folder = Path(tempfile.mkdtemp())
    print(case(int(sys.argv[1]), folder))
    t = tracetui.load(case(int(sys.argv[1]), folder), cache=False)
    print(t.warnings, t.summary()["verdict"])
