"""Achieved TFLOP/s and % of roof per op name, per kernel name and per event, from a Roofline's rows."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .points import Roofline, RooflineRow


@dataclass(frozen=True)
class Achieved:
    """Modelled work and the device time it took; the roofs' time for the part of it that has a roof.

    % of roof is the roofs' time over the device time (TraceLens's), so over many rows it is their mean
    weighted by device time: sum(pct x device time) / sum(device time), rows without a roof left out.
    """

    flops: float
    bytes: float
    device_us: float
    roof_us: float = 0.0  # max(FLOPs / compute peak, bytes / bandwidth) of the work with a roof
    roofed_us: float = 0.0  # the device time of that work (0: no roof, as on an unknown GPU)

    @property
    def tflops(self) -> float | None:
        return self.flops / (self.device_us * 1e6) if self.device_us > 0 else None

    @property
    def pct_of_roof(self) -> float | None:
        return 100 * self.roof_us / self.roofed_us if self.roofed_us > 0 else None

    def __add__(self, other: Achieved) -> Achieved:
        return Achieved(
            self.flops + other.flops,
            self.bytes + other.bytes,
            self.device_us + other.device_us,
            self.roof_us + other.roof_us,
            self.roofed_us + other.roofed_us,
        )


@dataclass(frozen=True)
class EventRoof:
    """One event's part of the roofline: an op call's work, or a kernel's share of the call that launched it."""

    achieved: Achieved
    row: RooflineRow  # the call's row: its op, shapes, dtype, bound
    share: float  # 1 for the call itself; for its device work, the work's duration over the call's device time
    launched: bool = False  # the event is device work the call launched, not the call
    on_cpu: bool = False  # a CPU capture: its times are CPU times, and there are no roofs to hold them to


def row_achieved(row: RooflineRow) -> Achieved:
    """A row's totals over its calls."""
    roof = _roof_us(row)
    return Achieved(row.flops, row.bytes, row.device_us, roof or 0.0, row.device_us if roof is not None else 0.0)


def op_achieved(r: Roofline, by_shape: bool = False) -> dict:
    """Per op name (by_shape: per (name, input shapes), as the grouped ops table has them), over its rows."""
    out: dict = {}
    for row in r.rows:
        key = (row.name, row.input_shapes) if by_shape else row.name
        out[key] = out[key] + row_achieved(row) if key in out else row_achieved(row)
    return out


def kernel_achieved(r: Roofline) -> dict[str, Achieved]:
    """Per kernel name: the FLOPs and bytes of the modelled calls that launched it, each call's work shared out
    among its device work by duration, and the device time of those launches only."""
    out: dict[str, Achieved] = {}
    for s in r.attribution.kernels:
        row = r.rows[s.row]
        roof = _roof_us(row)
        part = Achieved(
            s.calls * row.flops / row.count,
            s.calls * row.bytes / row.count,
            s.device_us,
            s.calls * roof / row.count if roof is not None else 0.0,
            s.device_us if roof is not None else 0.0,
        )
        out[s.kernel] = out[s.kernel] + part if s.kernel in out else part
    return out


def roofline_at(r: Roofline, event: int) -> EventRoof | None:
    """An op call's FLOPs, bytes and % of roof, or a kernel's share of its call's (None: not modelled).

    Two binary searches in the sorted calls and device work: cheap enough for the UI thread."""
    att = r.attribution
    calls = np.frombuffer(att.calls, np.int64)
    i = _find(calls, event)
    share, launched = 1.0, i < 0
    if launched:
        j = _find(np.frombuffer(att.work, np.int64), event)
        if j < 0:
            return None
        i, share = int(np.frombuffer(att.work_call, np.int64)[j]), float(np.frombuffer(att.work_share, np.float64)[j])
    row = r.rows[int(np.frombuffer(att.call_row, np.int64)[i])]
    call_us = float(np.frombuffer(att.call_us, np.float64)[i])
    roof = _roof_us(row)
    achieved = Achieved(
        share * row.flops / row.count,
        share * row.bytes / row.count,
        share * call_us,
        share * roof / row.count if roof is not None else 0.0,
        share * call_us if roof is not None else 0.0,
    )
    return EventRoof(achieved, row, share, launched, r.on_cpu)


def _roof_us(row: RooflineRow) -> float | None:
    """The roofs' time for a row's work (all its calls), None without a roof."""
    return None if row.pct_of_roof is None else row.pct_of_roof / 100 * row.device_us


def _find(sorted_events: np.ndarray, event: int) -> int:
    k = int(np.searchsorted(sorted_events, event))
    return k if k < len(sorted_events) and int(sorted_events[k]) == event else -1
