"""What a table definition is made of: display columns, JSON/CSV fields, sort keys."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar

from ..text.names import shorten_names
from ..text.sanitize import cell_len, crop_cells, visible

R = TypeVar("R")  # a row of the model
C = TypeVar("C")  # what a column may need besides its row (the table, for totals)


class UnknownSort(ValueError):
    """A sort key the table does not have (the CLI reports it as bad usage)."""

    def __init__(self, key: str, choices: list[str], also: str = "") -> None:
        super().__init__(f"unknown sort key {key!r}; choose from {', '.join(choices)}{also}")


@dataclass(frozen=True)
class Meaning:
    """What a sort letter means in every table of the viewer: its key and its words."""

    letter: str
    words: str


# The one vocabulary of sort letters: a letter means the same in every table (the ops, kernels and code
# views derive their sort keys and their help from it; a table offers the meanings it has columns for).
SORT_LETTERS: dict[str, Meaning] = {
    "name": Meaning("n", "name"),
    "calls": Meaning("c", "calls"),
    "self_cpu": Meaning("s", "self CPU"),
    "cpu_total": Meaning("t", "CPU total"),
    "cpu_avg": Meaning("a", "CPU average"),
    "self_device": Meaning("g", "self device"),
    "device_total": Meaning("u", "device total"),
    "device_avg": Meaning("d", "device average"),
    "min": Meaning("m", "min"),
    "max": Meaning("x", "max"),
    "latency": Meaning("l", "launch latency"),
    "latency_p95": Meaning("L", "launch latency p95"),  # the tail of the latency whose median l sorts by
    "path_time": Meaning("o", "time on the path"),
    "fused_saving": Meaning("f", "fused saving"),
    "launch_saving": Meaning("F", "saving from launches"),  # the part of the fused saving the launch calls buy
    "length": Meaning("k", "kernels in the sequence"),
    "std": Meaning("D", "standard deviation"),  # the spread of the durations whose mean d sorts by
    "pct_of_roof": Meaning("r", "% of roof"),
    "tflops": Meaning("R", "achieved FLOP/s"),  # the rate r's percentage is of its roof (its column: T-, G- or MFLOP/s)
    # Memory an op allocated (freed: negative): the capitals of the letters of the same times (s t g u).
    "self_cpu_memory": Meaning("S", "self CPU memory"),
    "cpu_memory": Meaning("T", "CPU memory"),
    "self_device_memory": Meaning("G", "self device memory"),
    "device_memory": Meaning("U", "device memory"),
    # A kernel's launch footprint (its example's args).
    "registers": Meaning("E", "registers per thread"),
    "shared_memory": Meaning("M", "shared memory"),
    "occupancy": Meaning("O", "estimated occupancy"),
}


@dataclass(frozen=True)
class SortKey:
    """Sort by a row attribute, descending unless reverse is False (names sort ascending).

    means: its entry in SORT_LETTERS (the letter that sorts by it in the viewer), or "" for none.
    get: the value from elsewhere than the row (a figure the view looks up, as the roofline's), else None.
    """

    attr: str
    reverse: bool = True
    means: str = ""
    get: Callable[[Any], Any] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.means and self.means not in SORT_LETTERS:
            raise ValueError(f"sort meaning {self.means!r} is not in SORT_LETTERS")

    def value(self, row: Any) -> Any:
        """The row's value to sort by (None: none, sorted last)."""
        return self.get(row) if self.get is not None else getattr(row, self.attr)


FOLD = "\x00"  # between a name and the folded text joined to it, until the name is cut to its width
MIN_FOLDED = 8  # the least room for folded text before the whole name is cut instead
MIN_FOLDED_NAME = 30  # a name with folded text is not cut shorter than this while columns can give way
KEEP = 0  # the priority of a column never dropped to fit: the name, calls, self and total times
PINNED = -1  # kept even where KEEP columns give way: the column the rows are sorted by, a table's point
FULL = 10**6  # the name width that cuts nothing
CONSTANT = 3  # columns of this priority or lower (a larger number) are left out when one value fills them
SEP = 3  # spaces between columns (torch's); 2 when a table has to be squeezed
NO_LIMIT = "TRACETUI_COLUMNS=0 shows every column in full"


@dataclass(frozen=True)
class Column(Generic[R, C]):
    """A displayed column: its header, its text for a row, the sort key that orders by it, and how it fits.

    priority: KEEP (0) is never dropped to fit; a larger number is dropped sooner. Where the KEEP columns alone
    do not fit, they give way (the rightmost first) to the PINNED (-1) ones, never dropped. The name column
    (name=True) is the one that shrinks, cut in the middle (tui.text.names.shorten_names), to min_width at least.
    """

    header: str
    text: Callable[[R, C, int], str]  # (row, context, name width) -> cell text
    sort: str | None = None
    priority: int = 1
    name: bool = False
    min_width: int = 16
    left: bool = False  # text aligned left (names always are; numbers right)
    tag: Callable[[R], str] | None = None  # the name column's mark after the name, never cut (`  [only A]`)
    fold: Callable[[R], str] | None = None  # with no room for it, this text joins the name (rows differing in it)
    torch: bool = False  # a name cut at its end as torch's table cuts it, with no width to fit (else in the middle)
    # The header and cell text the rows shown and the context give it, when the table is fitted (a rate column: the
    # unit its rates read best in, tui.tables.rates; the roofline's time column: "CPU time" on a CPU capture); None:
    # as it is.
    made_for: Callable[[Sequence[R], C], tuple[str, Callable[[R, C, int], str]]] | None = field(
        default=None, compare=False
    )


@dataclass
class Fitted:
    """A table fitted to a width: the columns kept, their cells, and what was left out (for the footer)."""

    columns: list
    cells: list[list[str]]
    name_width: int
    dropped: list[str] = field(default_factory=list)  # headers left out for lack of room
    constant: list[tuple[str, str]] = field(default_factory=list)  # (header, value) the same on every row
    sep: int = SEP

    @property
    def headers(self) -> list[str]:
        return [c.header for c in self.columns]

    @property
    def lefts(self) -> list[bool]:
        return [k == 0 or c.left or c.name for k, c in enumerate(self.columns)]

    def footer(self) -> list[str]:
        """What was left out and how to see everything (empty when nothing was)."""
        out = []
        if self.constant:
            out.append("The same on every row: " + "; ".join(f"{h} {v or 'none'}" for h, v in self.constant) + ".")
        if self.dropped:
            out.append(f"Left out to fit: {', '.join(self.dropped)} ({NO_LIMIT}).")
        return out


def fit(columns: Sequence[Column], rows: Sequence, context: Any, width: int | None, name_width: int = 0) -> Fitted:
    """The columns that fit in width, the name column cut in the middle to what is left; a column made for its rows
    (made_for: a rate column's unit) with the header and text these rows give it.

    width None: every column, names cut at name_width (torch's layout: in the middle, or at the end as torch does
    for a column marked torch). width 0: every column, names in full, or cut in the middle to name_width when it
    is given. Otherwise a low-priority column (CONSTANT or more) with one value on every row is left out
    (the footer says its value); then, while the name at its min_width does not fit, the gaps narrow to
    two spaces and columns are dropped, the highest priority number (the rightmost among equals) first,
    KEEP columns after every other and PINNED ones last of all. The name takes the room that is left.
    """
    cols = for_rows(columns, rows, context)
    if width is None:
        if any(c.name and c.torch for c in cols) or name_width <= 0:
            return _tagged(
                Fitted(cols, [[_text(c, r, context, name_width) for c in cols] for r in rows], name_width), rows
            )
        cells = [[_text(c, r, context, FULL if c.name else name_width) for c in cols] for r in rows]
        room = max(name_width - _tags(cols, rows), 1)
        return _tagged(_fitted(cols, cells, room, [], [], _spare(cols, rows)), rows)
    full = [[_text(c, r, context, FULL) for c in cols] for r in rows]
    if width <= 0:  # every column; the names whole, or cut in the middle to name_width
        room = max(name_width - _tags(cols, rows), 1) if name_width > 0 else 0
        return _tagged(_fitted(cols, full, room, [], [], _spare(cols, rows)), rows)
    tags = _tags(cols, rows)
    full = [[t + " " * tags if c.name else t for c, t in zip(cols, row, strict=True)] for row in full]
    constant = _constant(cols, full) if len(rows) > 1 else []
    keep, dropped, sep = _drop(cols, full, [k for k in range(len(cols)) if k not in dict(constant)], width)
    folded, dropped = _fold(cols, rows, full, keep, dropped, tags)
    if folded != cols:  # the name now holds what tells its rows apart: room for it before more columns
        keep, more, sep = _drop(folded, full, keep, width, spare_kept=True)
        cols, dropped = folded, dropped + more
    kept = [cols[k] for k in keep]
    body = [[row[k][: len(row[k]) - tags] if cols[k].name and tags else row[k] for k in keep] for row in full]
    room = width - sum(_width(cols, full, k) for k in keep if not cols[k].name) - sep * (len(keep) - 1) - tags
    out = _fitted(kept, body, max(room, 1), dropped, [(cols[j].header, v) for j, v in constant], _spare(cols, rows))
    out.sep = sep
    return _tagged(out, rows)


def for_rows(columns: Sequence[Column], rows: Sequence, context: Any) -> list[Column]:
    """The columns with the headers and texts these rows give them (Column.made_for: a rate column's unit)."""
    return [c if c.made_for is None else _made(c, *c.made_for(rows, context)) for c in columns]


def _made(column: Column, header: str, text: Callable) -> Column:
    return replace(column, header=header, text=text, made_for=None)


def _text(column: Column, row: Any, context: Any, width: int) -> str:
    """A cell's text as the terminal may show it (tui.text.sanitize.visible): a trace's names are data, and a
    control character in one neither acts on the terminal nor splits the row; widths are counted on this text."""
    return visible(column.text(row, context, width))


def _drop(
    cols: Sequence[Column], full: list[list[str]], keep: list[int], width: int, spare_kept: bool = False
) -> tuple[list[int], list[str], int]:
    """The columns kept, the headers dropped and the gap, for the narrowest name to fit in width (spare_kept: never
    a KEEP column; the name is cut shorter instead)."""
    dropped: list[str] = []
    sep = SEP
    while _need(cols, full, keep, sep) > width:
        if sep == SEP:
            sep = SEP - 1
            continue
        victim = _victim(cols, keep)
        if victim is None or (spare_kept and cols[victim].priority <= KEEP):
            break
        keep = [k for k in keep if k != victim]
        dropped.append(cols[victim].header)
    return keep, dropped, sep


def _fold(
    cols: Sequence[Column], rows: Sequence, full: list[list[str]], keep: list[int], dropped: list[str], tags: int
) -> tuple[list[Column], list[str]]:
    """Join each dropped fold column's text to the name (in place, before the tag's room), so that rows
    which differ only in it (one op at several input shapes) stay apart; the name's header says so."""
    n = next((k for k in keep if cols[k].name), None)
    folded = [k for k, c in enumerate(cols) if c.fold is not None and c.header in dropped]
    if n is None or not folded:
        return list(cols), dropped
    for row, r in zip(full, rows, strict=True):
        name = row[n][: len(row[n]) - tags] if tags else row[n]
        extra = " ".join(visible(cols[k].fold(r)) for k in folded)  # type: ignore[misc]
        row[n] = (f"{name}{FOLD}{extra}".rstrip() if extra.strip() else name) + " " * tags  # nothing to fold: the name
    header = " · ".join([cols[n].header] + [cols[k].header for k in folded])
    out = list(cols)
    out[n] = replace(cols[n], header=header, min_width=max(cols[n].min_width, len(header), MIN_FOLDED_NAME))
    return out, [h for h in dropped if h not in {cols[k].header for k in folded}]


def _shorten_folded(names: list[str], width: int) -> list[str]:
    """Names with folded text cut to width. Rows of one name (one op at several shapes) keep the name whole
    and have their folded parts cut in the middle together, so they stay apart; a name too long for that
    is cut with its folded text, as any name is."""
    if not any(FOLD in n for n in names):
        return shorten_names(names, width)
    split = [n.split(FOLD, 1) if FOLD in n else [n, ""] for n in names]
    out = [""] * len(names)
    groups: dict[str, list[int]] = {}
    for k, (head, _) in enumerate(split):
        groups.setdefault(head, []).append(k)
    whole = [k for head, ks in groups.items() if width - len(head) - 1 < MIN_FOLDED for k in ks]
    for k, cut in zip(whole, shorten_names([names[k].replace(FOLD, " ") for k in whole], width), strict=True):
        out[k] = cut
    for head, ks in groups.items():
        if width - len(head) - 1 >= MIN_FOLDED:
            tails = shorten_names([split[k][1] for k in ks], width - len(head) - 1)
            for k, tail in zip(ks, tails, strict=True):
                out[k] = f"{head} {tail}".rstrip()
    return out


def _tags(cols: Sequence[Column], rows: Sequence) -> int:
    """The room the name column's tags need (0 without tags)."""
    tag = next((c.tag for c in cols if c.name and c.tag), None)
    return max((len(tag(r)) for r in rows), default=0) if tag else 0


def _tagged(fitted: Fitted, rows: Sequence) -> Fitted:
    """The name column's tag put after each (cut) name."""
    k = next((j for j, c in enumerate(fitted.columns) if c.name and c.tag), None)
    if k is not None:
        tag = fitted.columns[k].tag
        for row, r in zip(fitted.cells, rows, strict=True):
            row[k] += visible(tag(r))
    return fitted


def _fitted(
    cols: list, body: list[list[str]], name_width: int, dropped: list[str], constant, spare: list[int] | None = None
) -> Fitted:
    """Cut the name column to name_width (0: in full) in the middle, keeping rows told apart; spare: per row, what
    more it may take (the room a shorter tag leaves)."""
    k = next((j for j, c in enumerate(cols) if c.name), None)
    if k is not None and name_width > 0:
        names = [row[k] for row in body]
        cut = [""] * len(names)
        extras = spare if spare and any(spare) else [0] * len(names)
        for extra in sorted(set(extras)):
            mine = [i for i, e in enumerate(extras) if e == extra]
            room = name_width + extra
            for i, short in zip(mine, _shorten_folded([names[i] for i in mine], room), strict=True):
                cut[i] = crop_cells(short, room)  # cut by characters: a wide name is cut again to its cells
        body = [row[:k] + [n] + row[k + 1 :] for row, n in zip(body, cut, strict=True)]
    return Fitted(cols, body, name_width, dropped, constant)


def _spare(cols: Sequence[Column], rows: Sequence) -> list[int]:
    """Per row, the room its name may take past the name column's (the longest tag's less its own): a row without
    the longest tag keeps its room."""
    lengths = _tag_lengths(cols, rows)
    return [max(lengths, default=0) - n for n in lengths]


def _tag_lengths(cols: Sequence[Column], rows: Sequence) -> list[int]:
    """Each row's name tag's length (0 without tags)."""
    tag = next((c.tag for c in cols if c.name and c.tag), None)
    return [len(tag(r)) for r in rows] if tag else [0] * len(rows)


def _width(cols: Sequence[Column], full: list[list[str]], k: int) -> int:
    """A column's width in terminal cells (a wide character takes two)."""
    return max([cell_len(cols[k].header)] + [cell_len(row[k]) for row in full])


def _need(cols: Sequence[Column], full: list[list[str]], keep: list[int], sep: int) -> int:
    """The width the kept columns take with the name at its narrowest."""
    widths = [
        min(_width(cols, full, k), max(cols[k].min_width, len(cols[k].header)))
        if cols[k].name
        else _width(cols, full, k)
        for k in keep
    ]
    return sum(widths) + sep * (len(keep) - 1)


def _victim(cols: Sequence[Column], keep: list[int]) -> int | None:
    """The column to drop next: the highest priority number, the rightmost among equals; never the name."""
    can = [k for k in keep if not cols[k].name]
    if not can:
        return None
    return max(can, key=lambda k: (cols[k].priority, k))


def _constant(cols: Sequence[Column], full: list[list[str]]) -> list[tuple[int, str]]:
    """(column, value) of the droppable columns whose text is the same on every row."""
    out = []
    for k, c in enumerate(cols):
        values = {row[k] for row in full}
        if c.priority >= CONSTANT and not c.name and len(values) == 1:
            out.append((k, values.pop()))
    return out


@dataclass(frozen=True)
class Field(Generic[R]):
    """A JSON key (also the CSV header) and the plain value of a row for it; doc and sql: what it holds and its
    SQL type, where the table is also an SQL table (tui/sql/schema.py reads them from here, never keeps its own)."""

    key: str
    value: Callable[[R], Any]
    doc: str = ""
    sql: str = "DOUBLE"


def docs(fields: Sequence[Field]) -> dict[str, str]:
    """Key -> what it holds, in the fields' order (SQL's schema)."""
    return {f.key: f.doc for f in fields}


def sql_types(fields: Sequence[Field]) -> dict[str, str]:
    """Key -> SQL type, in the fields' order."""
    return {f.key: f.sql for f in fields}


def name_room(width: int) -> int:
    """The narrowest the name column gets before other columns give way: a third of the width, 20 to 50."""
    return max(20, min(50, width // 3))


def fit_readable(
    columns: Sequence[Column], rows: Sequence, context: Any, width: int, sort: str | None = None, room: int = 0
) -> Fitted:
    """The table fitted to width for reading, in the viewer and the text reports alike: the column the rows are
    sorted by is never dropped, and the name gets a third of the width (or room) before it is cut, unless that
    would cost a column that must stay (then it is cut shorter)."""
    cols = kept_sorted(for_rows(columns, rows, context), sort)
    readable = [replace(c, min_width=room or name_room(width)) if c.name else c for c in cols]
    fitted = fit(readable, rows, context, width)
    kept = {c.header for c in cols if c.priority <= KEEP} - set(fitted.headers)
    return fit(cols, rows, context, width) if kept else fitted


def kept_sorted(columns: list[Column], sort: str | None) -> list[Column]:
    """The columns with one the rows are sorted by pinned (never dropped to fit, not even for a KEEP column): one
    already kept when there is one (Self CPU, not Self CPU % before it, which, kept, cost the table its # of Calls),
    else the first. Made only KEEP, a sorted Mean was one KEEP column too many at 80 columns, and the rightmost KEEP
    one, the sequences table's Sequence, gave way to it."""
    by = [k for k, c in enumerate(columns) if sort and c.sort == sort and not c.name]
    k = next((k for k in by if columns[k].priority <= KEEP), by[0] if by else None)
    if k is None:
        return columns
    return [*columns[:k], replace(columns[k], priority=min(columns[k].priority, PINNED)), *columns[k + 1 :]]


def sort_rows(rows: Sequence, sorts: dict[str, SortKey], key: str) -> list:
    """Rows ordered by a sort key; rows without a value (None) go last."""
    spec = sorts[key]
    return sorted(rows, key=lambda r: (spec.value(r) is None, _sortable(spec.value(r), spec.reverse)))


def _sortable(value: Any, reverse: bool) -> Any:
    if value is None:
        return 0
    return -value if reverse and not isinstance(value, str) else value


def limit(rows: list, n: int) -> list:
    """The first n rows (all when n <= 0)."""
    return rows if n <= 0 else rows[:n]
