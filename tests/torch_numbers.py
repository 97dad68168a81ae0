"""How close tracetui's numbers must come to torch's own: the rounding the trace file carries, stated once.

torch sums the durations it holds (its own clock, kept as floats); the trace file writes each timestamp rounded
to the nanosecond (microseconds with 3 decimals). A span's start and end are each off by up to a nanosecond
(CUDA activity timestamps are converted between clocks before they are written), so a span's duration read
from the file can differ from torch's by up to 2 ns, and a figure that adds up N spans by up to 2·N ns. Every
comparison with torch's numbers allows that, and nothing looser: a table torch printed allows, besides, half its
last printed digit (it prints 3 decimals of us, ms or s).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from tui.model.analyses.ops import OpsTable, table_name
from tui.model.analyses.results import Results
from tui.model.nesting import subtree_sum

NS_PER_SPAN_US = 0.002  # 2 ns per span read from the file, in microseconds
UNITS_US = {"us": 1.0, "ms": 1e3, "s": 1e6}


def allowed_us(spans: int, printed_unit: str | None = None) -> float:
    """The difference allowed between a figure of `spans` spans and torch's (plus half a printed digit)."""
    return NS_PER_SPAN_US * max(spans, 1) + (0.0005 * UNITS_US[printed_unit] if printed_unit else 0.0)


def assert_close(ours_us: float, torch_us: float, spans: int, what: object, printed_unit: str | None = None) -> None:
    """ours within the file's rounding of torch's value (see the module's docstring)."""
    limit = allowed_us(spans, printed_unit)
    assert abs(ours_us - torch_us) <= limit + 1e-9, (
        what,
        ours_us,
        torch_us,
        f"allowed {limit:.4f} us for {spans} spans",
    )


def spans_per_row(a: Results, table: OpsTable) -> dict[tuple[str, bool, str | None], int]:
    """For each row, how many spans its figures can add up (an upper bound): each of its events, the events
    nested under it on its thread, and the device activities launched from there."""
    x, launcher = a.trace.x, a.links.launcher
    parent = a.nesting.time_parent
    weight = np.ones(a.trace.n, np.int64)
    launched = launcher[launcher >= 0]
    np.add.at(weight, launched, 1)  # a launch call carries the spans of what it launched
    under = subtree_sum(parent, weight)
    by_name = np.bincount(x.name, weights=under, minlength=len(a.trace.names)).astype(np.int64)
    spans: dict[str, int] = {}
    for name, count in zip(a.trace.names, by_name.tolist(), strict=True):
        spans[table_name(name)] = spans.get(table_name(name), 0) + int(count)  # ProfilerStep#N: ProfilerStep*
    return {
        (r.name, r.is_device, r.input_shapes): r.count if r.is_device else spans.get(r.name, r.count)
        for r in table.rows
    }


@dataclass
class PrintedRow:
    """One row of a table torch printed: its (cut) name and its figures in us, with the unit each was printed in."""

    name: str
    count: int
    times: dict[str, tuple[float, str]]  # column -> (us, unit printed)
    cells: dict[str, str]  # column -> its text as printed, the name's too ("Name")


def parse_time(text: str) -> tuple[float, str]:
    """torch's printed time (`63.392us`, `1.221ms`, `2.000s`) in us, and its unit."""
    m = re.fullmatch(r"(-?[\d.]+)(us|ms|s)", text)
    assert m, text
    return float(m.group(1)) * UNITS_US[m.group(2)], m.group(2)


def parse_table(text: str) -> tuple[list[PrintedRow], dict[str, tuple[float, str]]]:
    """The rows and footers (`Self CPU time total` -> us) of a key_averages().table() torch printed."""
    lines = text.splitlines()
    name_width = len(lines[0].split()[0])  # the rule above the header: a run of dashes per column
    header = next(i for i, line in enumerate(lines) if line.strip().startswith("Name"))
    columns = re.split(r"\s{2,}", lines[header].strip())[1:]
    rows, footers = [], {}
    for line in lines[header + 2 :]:
        if line.startswith("---"):
            continue
        if ":" in line and line.split(":")[0] in ("Self CPU time total", "Self CUDA time total"):
            key, value = line.split(":", 1)
            footers[key] = parse_time(value.strip())
            continue
        if not line.strip():
            continue
        cells = line[name_width:].split()
        assert len(cells) == len(columns), line
        values = dict(zip(columns, cells, strict=True))
        times = {c: parse_time(v) for c, v in values.items() if not v.endswith("%") and c != "# of Calls"}
        name = line[:name_width].strip()
        rows.append(PrintedRow(name, int(values["# of Calls"]), times, {"Name": name, **values}))
    return rows, footers
