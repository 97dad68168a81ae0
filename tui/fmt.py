"""Number formatting shared by the headless reports and the app (torch's conventions)."""

from __future__ import annotations

import re


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


ELLIPSIS = "…"
_PIECES = re.compile(r"[A-Za-z0-9]+|[^A-Za-z0-9]+")


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


def shorten_names(names: list[str], width: int) -> list[str]:
    """Names cut to width in the middle, keeping the words that tell them apart (never a word cut without '…').

    Words shared by most names (`void`, `cutlass`, `Kernel2`, `at::native`) go first; a gap reads `…`.
    Names that come out alike are shortened again on the words that differ among them alone.
    """
    width = max(width, 1)
    counts = _word_counts(names)
    out = [n if len(n) <= width else _shorten(n, width, counts) for n in names]
    for _ in range(3):
        groups: dict[str, list[int]] = {}
        for k, (full, short) in enumerate(zip(names, out, strict=True)):
            if full != short:
                groups.setdefault(short, []).append(k)
        clashes = [ks for ks in groups.values() if len({names[k] for k in ks}) > 1 or _clashes_full(out, names, ks)]
        if not clashes:
            break
        for ks in clashes:
            local = _word_counts([_fold(names[k]) for k in ks])
            for k in ks:
                out[k] = _shorten(names[k], width, local, counts)
    return _apart(names, out, width)


def _apart(names: list[str], out: list[str], width: int) -> list[str]:
    """Names still alike after the words: each shows short windows at the places it parts from the others."""
    windowed: set[str] = set()
    for _ in range(4):
        groups: dict[str, set[str]] = {}
        for full, short in zip(names, out, strict=True):
            groups.setdefault(short, set()).add(full)
        alike = {full for g in groups.values() if len(g) > 1 for full in g}
        if not alike - windowed:
            break
        windowed |= alike
        paths = _partings(sorted(windowed), 0)
        out = [
            _windows(full, paths[full], width) if full in paths else short
            for full, short in zip(names, out, strict=True)
        ]
    return out


def _partings(group: list[str], start: int) -> dict[str, list[int]]:
    """Per name, the positions where it parts from the rest of its group, splitting the group at each."""
    if len(group) == 1:
        return {group[0]: []}
    d = start
    while all(len(n) > d for n in group) and len({n[d] for n in group}) == 1:
        d += 1
    parts: dict[str, list[str]] = {}
    for n in group:
        parts.setdefault(n[d] if len(n) > d else "", []).append(n)
    out = {}
    for part in parts.values():
        for name, path in _partings(part, d + 1).items():
            out[name] = [d, *path]
    return out


def _windows(name: str, points: list[int], width: int) -> str:
    """The name's text around each parting point (as many as fit, the deepest first), joined by '…'."""
    points = [p for p in points if p > 0] or points
    if not points:
        return name if len(name) <= width else name[: width - 1] + ELLIPSIS
    for n in range(len(points), 0, -1):
        size = (width - n - 1) // n
        if size >= 3 or n == 1:
            break
    points = points[-n:]
    out, end = "", 0
    for p in points:
        a = max(p - 1, end)
        if a >= len(name):
            break
        out += (ELLIPSIS if a > end or (a and not out) else "") + name[a : a + max(size, 1)]
        end = a + max(size, 1)
    text = out + (ELLIPSIS if end < len(name) else "")
    return text if len(text) <= width else text[: width - 1] + ELLIPSIS


def _common(a: str, b: str) -> int:
    """The length of the prefix a and b share."""
    k = 0
    while k < min(len(a), len(b)) and a[k] == b[k]:
        k += 1
    return k


def shorten(name: str, width: int) -> str:
    """One name cut to width in the middle (see shorten_names)."""
    return shorten_names([name], width)[0]


def _clashes_full(out: list[str], names: list[str], ks: list[int]) -> bool:
    short = out[ks[0]]
    return any(n == short for n, o in zip(names, out, strict=True) if n == o)


def _word_counts(names: list[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for n in set(names):
        for w in set(_PIECES.findall(n)):
            if w[0].isalnum():
                counts[w] = counts.get(w, 0) + 1
    return counts


def _shorten(name: str, width: int, counts: dict[str, int], tie: dict[str, int] | None = None) -> str:
    """Keep the last word, then the rarest words (the first among equals) that fit in width; gaps become '…'."""
    pieces = _PIECES.findall(_fold(name))
    words = [k for k, p in enumerate(pieces) if p[0].isalnum()]
    if not words:
        return name[: width - 1] + ELLIPSIS
    last = len(words) - 1
    rank = sorted(
        range(len(words)),
        key=lambda j: (
            tie is None and j != last,
            counts.get(pieces[words[j]], 0),
            (tie or {}).get(pieces[words[j]], 0),
            j != last,
            j != 0,
            j,
        ),
    )
    kept: set[int] = set()
    best = ""
    for j in rank:
        text = _render(pieces, kept | {words[j]})
        if len(text) <= width:
            kept.add(words[j])
            best = text
    return best or name[: width - 1] + ELLIPSIS


def _fold(name: str) -> str:
    """A C++ name without its return type and parameters (`void f<T>(int, float)` -> `f<T>(…)`)."""
    name = name.removeprefix("void ")
    if not name.endswith(")"):
        return name
    depth = 0
    for k in range(len(name) - 1, 0, -1):
        depth += {")": 1, "(": -1}.get(name[k], 0)
        if depth == 0:
            return name[:k] + "(…)" if (name[k - 1].isalnum() or name[k - 1] in ">_") else name
    return name


def _render(pieces: list[str], kept: set[int]) -> str:
    """The kept words in order with the separators before them; a run of left-out words is one '…'."""
    out: list[str] = []
    gap = False
    for k, p in enumerate(pieces):
        if p[0].isalnum():
            if k in kept:
                out.append(p)
            elif not gap:
                out.append(ELLIPSIS)
            gap = k not in kept
        elif k + 1 < len(pieces) and k + 1 in kept or (k + 1 == len(pieces) and k - 1 in kept):
            out.append(p.lstrip() if out and out[-1] == ELLIPSIS else p)
        elif k + 1 < len(pieces) and not gap and k - 1 in kept and k + 1 not in kept:
            continue
    text = "".join(out)
    while ELLIPSIS * 2 in text:
        text = text.replace(ELLIPSIS * 2, ELLIPSIS)
    return text.strip()
