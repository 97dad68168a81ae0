"""`tracetui memory`: the peak per device, then each device's top allocating ops and candidate leaks."""

from __future__ import annotations

from ..model.analyses.memory import DeviceMemory
from ..tables import memory as M
from ..tables.base import Field
from .formats import table, terminal_width, titled, to_csv, to_json, written_doc


@written_doc
def memory_document(devices: list[DeviceMemory]) -> dict:
    """What `tracetui memory --format json` prints, as data."""
    return {"devices": [M.device_fields(d) for d in devices]}


def render_memory(devices: list[DeviceMemory], fmt: str) -> str:
    if fmt == "json":
        return to_json(memory_document(devices))
    if fmt == "csv":
        fields: list[Field[DeviceMemory]] = [Field(k, _getter(k)) for k in M.CSV_KEYS]
        return to_csv(fields, devices)
    width = terminal_width()
    out = [table(fmt, M.DEVICE_COLUMNS, devices, None, M.NAME_WIDTH, M.footers(devices), width)]
    for d in devices:
        for title, rows in (
            (f"{d.device}: the ops that allocate the most" + (", by module and line" if _sites(d) else ""), d.top_ops),
            (f"{d.device}: not freed by the end", d.leaks),
        ):
            if rows:
                out.append(titled(fmt, title, table(fmt, M.op_columns(rows), rows, None, M.NAME_WIDTH, [], width)))
    return "\n\n".join(out)


def _sites(d: DeviceMemory) -> bool:
    return any(r.module or r.line for r in d.top_ops)


def _getter(key: str):
    return lambda d: M.device_fields(d)[key]
