"""Number formatting shared by the headless reports and the app (torch's conventions); long names are cut by names.py."""

from __future__ import annotations

import re


def fmt_time(us: float) -> str:
    """Like torch's _format_time: 3 decimals in us, ms or s."""
    if abs(us) >= 1e6:
        return f"{us / 1e6:.3f}s"
    if abs(us) >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def torch_time(us: float) -> str:
    """Exactly torch's _format_time, for the figures of its table: as fmt_time, but a negative time (a Self CPU torch
    2.12-2.13 prints below zero) stays in us, as torch compares it with its units without abs (-1234.500us, where
    fmt_time says -1.234ms)."""
    return fmt_time(us) if us >= 0 else f"{us:.3f}us"


def fmt_share(part: float, whole: float) -> str:
    """Like torch's _format_time_share."""
    return "NaN" if whole == 0 else f"{part * 100.0 / whole:.2f}%"


def fmt_memory(nbytes: int) -> str:
    """Bytes in binary units named as such, as torch's memory_viz writes them (KiB, MiB, GiB: 1024-based; rates stay
    decimal, GB/s), 2 decimals; bytes plain."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(nbytes) >= scale:
            return f"{nbytes / scale:.2f} {unit}"
    return f"{nbytes} B"


def fmt_memory_gutter(nbytes: float, digits: int = 3) -> str:
    """Bytes in a few characters with the binary unit named as the long form names it (KiB, MiB, GiB, TiB), for a
    gutter or a narrow column (the memory lanes', the allocator snapshot's views): 0B, 512KiB, 87.4MiB, 116MiB,
    1.33GiB (7 characters at most below 1000 of a unit); digits=2 is a character shorter (87MiB, 1.3GiB) where the
    lane's label needs it."""
    value = float(nbytes)
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(value) >= scale:
            value /= scale
            text = f"{value:.{digits}g}"
            return f"{value:.0f}{unit}" if "e" in text or abs(value) >= 100 else f"{text}{unit}"
    return f"{value:.0f}B"


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


def fmt_number(value: object, digits: int = 3) -> str:
    """A footprint value for people: floats (or their text) to a few significant digits (4.272727 -> 4.27);
    anything else (ints, [128, 1, 1]) as it is."""
    if isinstance(value, str) and "." in value:
        try:
            return fmt_number(float(value), digits)
        except ValueError:
            return value
    if isinstance(value, float):
        return f"{value:.{digits}g}" if abs(value) < 10**digits else f"{value:,.0f}"
    return str(value)


def compact_shapes(shapes: str) -> str:
    """torch's input shapes with no spaces and no trailing empty inputs: [[512], [141, 512], [], []] -> [[512],[141,512]]."""
    text = "".join(shapes.split())
    while text.endswith(",[]]"):
        text = text[: -len(",[]]")] + "]"
    return text


def plural(n: int, word: str, many: str | None = None) -> str:
    """A count and its noun, singular for one: `1 call`, `2 calls`, `1,204 kernels` (many: an irregular plural)."""
    return f"{n:,} {word if n == 1 else many or word + 's'}"


_COUNTED = re.compile(r"(?<![\w.,])(\d[\d,]*)((?: [\w\[\]-]+){0,3}?) (\w+?)\((s|es)\)")  # `3 fp32 GEMM shape(s)`
_ONE = re.compile(
    r"(?<![\w.,])1 (calls|steps|kernels|launches|events|shapes|ranks|rows|captures|streams|copies|sets|"
    r"threads|outliers|frames|ops|stretches|items|times|replays|chunks|values|activities)\b"
)
_SINGULAR = {"copies": "copy", "activities": "activity", "launches": "launch", "stretches": "stretch"}


_EACH_OF_ONE = re.compile(r"\b([Ee])ach of the 1 (?=\w)")  # "Each of the 1 launch": "The one launch"


def plurals(text: str) -> str:
    """Counts in templated text (notes, findings) read one way: `1 call`, `2 calls`, never `1 calls` or `3 call(s)`,
    and `the one launch` where a template says `each of the 1 launches`."""
    text = _COUNTED.sub(lambda m: f"{m[1]}{m[2]} {m[3]}" + ("" if m[1] == "1" else m[4]), text)
    text = _ONE.sub(lambda m: "1 " + _SINGULAR.get(m[1], m[1][:-1]), text)
    return _EACH_OF_ONE.sub(lambda m: "The one " if m[1] == "E" else "the one ", text)
