"""Traces whose names would act on a terminal: real samples with control characters, escape sequences, bidi
overrides and wide characters put into every name a renderer shows (ops, kernels, annotations, Python frames,
threads, processes, string args) and into the file's name. Seeded, so a failing case can be run again."""

from __future__ import annotations

import gzip
import json
import random
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_traces"

# What an attacker writes (issue: a pane's title set, clipboard buffers written, the screen cleared), and what a
# real name may hold: wide CJK, full-width and combining characters, emoji.
ATTACKS = (
    "\x1b]0;PWNED-TITLE\x07",
    "\x1b]52;c;ZWNobyBwd25lZA==\x07",
    "\x1b[2J",
    "\x1b[6n",
    "\x1bP+q\x1b\\",
    "\x9b31m",
    "\x9d0;T\x9c",
    "\x85",
    "\r",
    "\nNL-SPLIT",  # a newline of a name's, marked: a line of output starting with the mark was split by one
    "\b\b",
    "\t",
    "\x7f",
    "\x00",
    "\u202e",
    "\u2066",
    "\u2069",
    "\u200f",
    "\u2028",
)
WIDE = ("注意力机制", "ｆｕｌｌ", "e\u0301", "🚀", "한국어")
# A terminal acts on these: C0 but newline (no format lays out a tab), DEL, C1, bidi controls, line separators.
UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
# names the analyses read rules from: kept, so that every report has rows (a step, a launch) to show the others by
KEEP = re.compile(r"^(cuda|hip|ProfilerStep#|nccl|Memcpy|Memset|\[memory\]|process_|thread_|Iteration Start)")


def hostile(rng: random.Random, name: str) -> str:
    """The name with attacks and wide text around and inside it."""
    parts = [rng.choice(ATTACKS), rng.choice(WIDE), name[: len(name) // 2], rng.choice(ATTACKS), name[len(name) // 2 :]]
    return "".join(parts) + rng.choice(ATTACKS) + rng.choice(WIDE)


def _args(rng: random.Random, args: dict) -> dict:
    """String args (a thread's or process's name, an op's input types and concrete inputs) made hostile, and the
    strings in lists of them; numbers kept."""

    def one(k: str, v):
        if isinstance(v, str) and v and k != "labels":
            return hostile(rng, v)
        return [hostile(rng, x) if isinstance(x, str) and x else x for x in v] if isinstance(v, list) else v

    return {k: one(k, v) for k, v in args.items()}


def poisoned(events: list[dict], seed: int) -> list[dict]:
    """Every shown name of the events made hostile, those the analyses key on kept."""
    rng = random.Random(seed)
    out = []
    for e in events:
        e = dict(e)
        name = e.get("name")
        if isinstance(name, str) and not KEEP.match(name) and e.get("ph") != "M":
            e["name"] = hostile(rng, name)
        if isinstance(e.get("args"), dict) and (e.get("ph") == "M" or e.get("cat") in ("cpu_op", "kernel")):
            e["args"] = _args(rng, e["args"])
        out.append(e)
    return out


def hostile_trace(tmp: Path, sample: str, seed: int) -> Path:
    """A copy of sample_traces/<sample> with hostile names, under a hostile file name."""
    doc = json.loads(gzip.decompress((SAMPLES / sample).read_bytes()))
    events = doc if isinstance(doc, list) else doc["traceEvents"]
    doc = {**(doc if isinstance(doc, dict) else {}), "traceEvents": poisoned(events, seed)}
    stem = sample.replace("/", "-").removesuffix(".json.gz")
    path = tmp / f"{stem}-\x1b]0;FILE-TITLE\x07\u202e注意-{seed}.json"
    path.write_text(json.dumps(doc))
    return path


def leaks(text: str) -> list[str]:
    """The unsafe characters in text, for an assertion's message (a name's own newline, marked, among them)."""
    split = ["name's newline"] if "\nNL-SPLIT" in text else []
    return sorted({repr(m) for m in UNSAFE.findall(text)}) + split
