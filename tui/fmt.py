"""Number formatting shared by the headless reports and the app (torch's conventions)."""

from __future__ import annotations


def fmt_time(us: float) -> str:
    """Like torch's _format_time: 3 decimals in us, ms or s."""
    if abs(us) >= 1e6:
        return f"{us / 1e6:.3f}s"
    if abs(us) >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def fmt_share(part: float, whole: float) -> str:
    """Like torch's _format_time_share."""
    return "NaN" if whole == 0 else f"{part * 100.0 / whole:.2f}%"


def fmt_memory(nbytes: int) -> str:
    """Like torch's _format_memory: binary units with 2 decimals, bytes plain."""
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(nbytes) >= scale:
            return f"{nbytes / scale:.2f} {unit}"
    return f"{nbytes} B"


def fmt_dur(ns: float) -> str:
    """A compact duration for labels and rulers, from nanoseconds."""
    ns = float(ns)
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if abs(ns) >= scale:
            value = ns / scale
            return f"{value:.3g}{unit}" if value < 100 else f"{value:.0f}{unit}"
    return f"{ns:.0f}ns"


def truncate(text: str, width: int) -> str:
    """Cut to width with '...' as torch's table does."""
    return text if len(text) < width - 3 else text[: width - 3] + "..."


def fmt_tick(ns: int, step: int) -> str:
    """A ruler label for time ns with enough decimals to tell ticks step ns apart."""
    units = (("s", 10**9), ("ms", 10**6), ("us", 10**3))
    found = next(((u, sc) for u, sc in units if abs(ns) >= sc or step >= sc), None)
    if found is None:
        return f"{ns}ns"
    unit, scale = found
    decimals = 0
    while decimals < 6 and (step * 10**decimals) % scale:
        decimals += 1
    return f"{ns / scale:.{decimals}f}{unit}"


def short_name(name: str, limit: int = 100) -> str:
    """A long C++ kernel name with its template arguments and parameters folded: f<…>(…)."""
    if len(name) <= limit:
        return name
    out, depth = [], 0
    for ch in name:
        if ch in "<(":
            if depth == 0:
                out.append(ch + "…")
            depth += 1
        elif ch in ">)":
            depth = max(depth - 1, 0)
            if depth == 0:
                out.append(ch)
        elif depth == 0:
            out.append(ch)
    return truncate("".join(out), limit)
