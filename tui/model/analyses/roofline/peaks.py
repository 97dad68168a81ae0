"""A GPU's limits for the roofline: dense peak TFLOP/s per unit and dtype and memory bandwidth, detected or read.

The table ships as data (tui/model/data/gpus.toml, one entry per GPU with its datasheet). A trace's GPU is
found from deviceProperties: by name, then by compute capability, SM count and memory when the name is
missing. --gpu NAME picks an entry; --peaks FILE reads measured limits, in our format or TraceLens's arch JSON.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

UNITS = ("matrix", "vector")
DTYPES = ("fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "fp4", "int8")
PEAK_KEYS = frozenset(f"{u}_{d}" for u in UNITS for d in DTYPES)
GIB = 1 << 30


class PeaksError(ValueError):
    """A peaks file or GPU name that cannot be used: the message names the file and the field."""


@dataclass
class Device:
    """The limits the roofline is drawn with (TFLOP/s by 'matrix_bf16'-style keys, GB/s)."""

    name: str
    peak_tflops: dict[str, float] = field(default_factory=dict)
    peak_gbps: float | None = None
    source: str = ""
    host_link: str = ""  # how it reaches the host: "PCIe 5.0 x16", "NVLink-C2C" (links.py; "": not said)
    host_gbps: float | None = None  # its rate each way, where the link's name does not give it
    peer_link: str = ""  # how it reaches its peers: "NVLink 4" ("": over the host link)
    peer_gbps: float | None = None


@dataclass(frozen=True)
class Entry:
    """One row of gpus.toml: how to recognise the GPU, and its limits."""

    device: Device
    match: tuple[str, ...]
    cc: str = ""
    sms: int = 0
    memory_gib: tuple[float, float] | None = None


# The table's text is a module value, so a stored roofline's fingerprint (code_id.py) changes with the data.
GPU_TABLE = resources.files("tui.model").joinpath("data/gpus.toml").read_text("utf-8")


@lru_cache(maxsize=1)
def table() -> tuple[Entry, ...]:
    """The shipped GPU table, in file order (the first match wins)."""
    return tuple(_entry(raw) for raw in tomllib.loads(GPU_TABLE)["gpu"])


def _entry(raw: dict[str, Any]) -> Entry:
    device = Device(raw["name"], {k: float(v) for k, v in raw["peak_tflops"].items()}, float(raw["peak_gbps"]))
    device.source = raw["source"]
    device.host_link, device.peer_link = str(raw.get("host_link", "")), str(raw.get("peer_link", ""))
    device.host_gbps = float(raw["host_gbps"]) if "host_gbps" in raw else None
    device.peer_gbps = float(raw["peer_gbps"]) if "peer_gbps" in raw else None
    mem = raw.get("memory_gib")
    return Entry(device, tuple(raw["match"]), raw.get("cc", ""), int(raw.get("sms", 0)), tuple(mem) if mem else None)


def gpu_name(devices: list[dict]) -> str:
    """What the trace calls its GPU ('' when deviceProperties is empty or nameless)."""
    return next((str(d.get("name") or "") for d in devices if isinstance(d, dict)), "")


def detect(devices: list[dict]) -> Device | None:
    """The table's entry for the trace's first GPU, by name, then by compute capability, SMs and memory."""
    props = next((d for d in devices if isinstance(d, dict)), None)
    if props is None:
        return None
    name = str(props.get("name") or "")
    mem = _number(props.get("totalGlobalMem")) / GIB
    cc = f"{props.get('computeMajor', props.get('major', ''))}.{props.get('computeMinor', props.get('minor', ''))}"
    sms = int(_number(props.get("numSms", props.get("multiProcessorCount"))))
    for e in table():
        if name and any(re.search(p, name, re.IGNORECASE) for p in e.match) and _fits(e, mem, sms):
            return e.device
    for e in table():
        if e.cc and e.sms and e.memory_gib and e.cc == cc and _fits(e, mem, sms):
            how = f"{e.device.name}, by compute capability {cc}, {sms} SMs/CUs and {mem:.0f} GiB"
            return replace(e.device, name=how if not name else f"{how} ({name})")
    return None


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


def _fits(e: Entry, mem_gib: float, sms: int) -> bool:
    if e.memory_gib and mem_gib and not e.memory_gib[0] <= mem_gib <= e.memory_gib[1]:
        return False
    return not (e.sms and sms and e.sms != sms)


def by_name(name: str) -> Device:
    """The entry --gpu NAME asks for (case, spaces and dashes ignored); unknown names list the choices."""
    want = _key(name)
    for e in table():
        if _key(e.device.name) == want:
            return e.device
    hits = [e.device for e in table() if want and want in _key(e.device.name)]
    if len(hits) == 1 or (hits and all(h.name.split(" (")[0] == hits[0].name.split(" (")[0] for h in hits)):
        return hits[0]
    names = ", ".join(e.device.name for e in table())
    raise PeaksError(f"unknown GPU {name!r}; choose from {names}")


def _key(name: str) -> str:
    return re.sub(r"[\s_\-]+", "", name).lower()


def read_peaks(path: str) -> Device:
    """Measured limits from a file: ours (peak_gbps, peak_tflops) or TraceLens's arch JSON (mem_bw_gbps, ...)."""
    try:
        text = Path(path).read_text("utf-8")
    except OSError as exc:
        raise PeaksError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        raw = tomllib.loads(text) if path.endswith(".toml") else json.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise PeaksError(f"{path}: not valid {'TOML' if path.endswith('.toml') else 'JSON'}: {exc}") from None
    if not isinstance(raw, dict):
        raise PeaksError(f"{path}: expected an object with peak_gbps and peak_tflops")
    tracelens = "mem_bw_gbps" in raw or "max_achievable_tflops" in raw
    bw_key, peaks_key = ("mem_bw_gbps", "max_achievable_tflops") if tracelens else ("peak_gbps", "peak_tflops")
    gbps = _positive(path, bw_key, raw.get(bw_key))
    peaks = raw.get(peaks_key)
    if not isinstance(peaks, dict) or not peaks:
        raise PeaksError(f'{path}: field {peaks_key!r} must be a table of TFLOP/s such as {{"matrix_bf16": 708}}')
    tflops = {}
    for key, value in peaks.items():
        if key not in PEAK_KEYS:
            raise PeaksError(f"{path}: field {peaks_key}.{key}: unknown; use {{matrix,vector}}_{{{','.join(DTYPES)}}}")
        tflops[key] = _positive(path, f"{peaks_key}.{key}", value)
    source = str(raw.get("source") or raw.get("_reference") or f"measured ({Path(path).name})")
    device = Device(str(raw.get("name") or Path(path).stem), tflops, gbps, source)
    device.host_link, device.peer_link = str(raw.get("host_link") or ""), str(raw.get("peer_link") or "")
    device.host_gbps = _positive(path, "host_gbps", raw["host_gbps"]) if "host_gbps" in raw else None
    device.peer_gbps = _positive(path, "peer_gbps", raw["peer_gbps"]) if "peer_gbps" in raw else None
    return device


def _positive(path: str, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise PeaksError(f"{path}: field {key!r} must be a positive number, not {value!r}")
    return float(value)


HALF = ("bf16", "fp16", "fp8")


def roof_dtype(device: Device, unit: str, dtype: str) -> str:
    """The precision of the units a row's roof is: bf16/fp16/fp8 vector work the GPU's source gives no non-tensor
    rate for is measured on the fp32 units (PyTorch computes it in fp32: see peak); otherwise its own dtype."""
    rates = device.peak_tflops
    if unit == "vector" and dtype in HALF and f"vector_{dtype}" not in rates and "vector_fp32" in rates:
        return "fp32"
    return dtype


def peak(device: Device, unit: str, dtype: str) -> float | None:
    """The roof (TFLOP/s) of a unit and dtype, with the fallbacks the hardware implies.

    fp32 matrix work (a GEMM without TF32) runs on the vector units where no fp32 matrix unit is listed
    (NVIDIA). Vector work in bf16/fp16 is measured against the fp32 vector units unless the GPU's source lists a
    non-tensor rate for it: PyTorch's elementwise, reduction, softmax and norm kernels load bf16/fp16 but compute in
    fp32 (at::opmath_type), so the fp32 units are what they run on; the packed bf16x2/half2 rates some whitepapers
    print (2x or 4x fp32) are for kernels written with those instructions. Integer dtypes have no compute roof here:
    their ops are measured against the memory roof only.
    """
    rates = device.peak_tflops
    if unit == "matrix":
        found = rates.get(f"matrix_{dtype}")
        return found if found is not None or dtype != "fp32" else rates.get("vector_fp32")
    if dtype in ("bf16", "fp16", "fp8"):
        return rates.get(f"vector_{dtype}", rates.get("vector_fp32"))
    return rates.get(f"vector_{dtype}")
