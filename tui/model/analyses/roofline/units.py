"""Which units a roofline row's math ran on, read from its kernels' names (kernel_roles.classify), and so its roof.

The flops model gives an op family's natural unit (GEMMs: the matrix units). The kernels that ran it say more: an
ffma or sgemm kernel ran on the CUDA cores, a TF32 one on the tensor cores. A row's kernel unit and dtype are those
of the kernels with most of its device time among the ones whose names tell (GEMM, convolution and attention
kernels); a row whose kernels say nothing keeps the model's unit, and an fp32 GEMM faster than the fp32 roof is
then taken to have run on TF32 tensor cores (allow_tf32, once PyTorch's default).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Protocol, TypeVar

from ..kernel_roles import MATRIX, VECTOR, classify
from .peaks import Device, peak, roof_dtype


class Row(Protocol):
    """What this module reads of a roofline row (points.RooflineRow)."""

    unit: str
    dtype: str
    kernel_unit: str
    kernel_dtype: str

    @property
    def tflops(self) -> float | None: ...


class Share(Protocol):
    """What this module reads of a kernel's share of a row (points.KernelShare)."""

    kernel: str
    row: int
    device_us: float


R = TypeVar("R", bound=Any)  # a roofline row (a dataclass)


def with_kernel_units(rows: list[R], kernels: Sequence[Share]) -> list[R]:
    """The rows with the unit and dtype their kernels ran on (most device time first; "" where no name tells)."""
    times: dict[int, dict[tuple[str, str], float]] = {}
    for k in kernels:
        c = classify(k.kernel)
        if c.unit:
            per = times.setdefault(k.row, {})
            per[(c.unit, c.dtype)] = per.get((c.unit, c.dtype), 0.0) + k.device_us
    out = []
    for i, row in enumerate(rows):
        found = times.get(i)
        unit, dtype = max(found, key=lambda key: found[key]) if found else ("", "")
        out.append(replace(row, kernel_unit=unit, kernel_dtype=dtype))
    return out


def roof_of(row: Row, device: Device) -> tuple[str, str]:
    """The unit and dtype of the roof a row is measured against."""
    if row.unit == MATRIX and row.kernel_unit == VECTOR:  # a GEMM the CUDA cores ran (sgemm, ffma, gemv)
        return VECTOR, roof_dtype(device, VECTOR, row.dtype)
    if row.dtype == "fp32" and row.unit == MATRIX and _tensor_core_fp32(row, device):
        return MATRIX, "tf32"
    return row.unit, roof_dtype(device, row.unit, row.dtype)


def _tensor_core_fp32(row: Row, device: Device) -> bool:
    """Did an fp32 GEMM run on TF32 tensor cores: its kernels say so, or (they say nothing) it beat the fp32 roof?"""
    if "matrix_tf32" not in device.peak_tflops:
        return False
    if row.kernel_unit == MATRIX:
        return row.kernel_dtype == "tf32" or "matrix_fp32" not in device.peak_tflops
    fp32 = peak(device, row.unit, "fp32")
    return not row.kernel_unit and bool(fp32) and (row.tflops or 0.0) > (fp32 or 0.0)
