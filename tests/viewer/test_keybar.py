"""One key vocabulary, and a key bar that shows what is on and the focused view's keys, ending with `? more`."""

from __future__ import annotations

import pytest
from conftest import SAMPLES, press_settled, wait_for_main
from textual.actions import parse
from textual.binding import Binding

from tui.app import TraceApp
from tui.tables.base import SORT_LETTERS
from tui.widgets.code_view import CodeView, FramesTable
from tui.widgets.kernels_view import KernelsView
from tui.widgets.keybar import SEP, Entry, KeyBar, fitted
from tui.widgets.ops_view import OpsView
from tui.widgets.rows_view import RowsView
from tui.widgets.sequences_view import SequencesView

BERT = str(SAMPLES / "h100-bert-small.json.gz")
TABLES = [
    (OpsView, [RowsView]),
    (KernelsView, [RowsView]),
    (FramesTable, [RowsView, CodeView]),
    (SequencesView, [RowsView]),
]


def sorts_of(cls) -> dict[str, str]:
    """letter -> the sort key its binding sorts by."""
    out: dict[str, str] = {}
    for b in cls.BINDINGS:
        _, action, params = parse(b.action)
        if action == "sort":
            out[b.key] = str(params[0])
    return out


@pytest.mark.parametrize("cls, around", TABLES, ids=lambda c: getattr(c, "__name__", ""))
def test_a_sort_letter_means_the_same_in_every_table(cls, around):
    meaning = {m.letter: (name, m.words) for name, m in SORT_LETTERS.items()}
    for b in cls.BINDINGS:
        _, action, params = parse(b.action)
        if action != "sort":
            continue
        spec = cls.SORTS[params[0]]
        assert meaning[b.key][0] == spec.means, (cls.__name__, b.key, params)
        assert b.description == f"Sort by {meaning[b.key][1]}" and b.id == f"{b.id.split('.')[0]}.sort_{params[0]}"
    others = {k for c in around for b in c.BINDINGS if isinstance(b, Binding) for k in b.key.split(",")}
    others |= {k for b in cls.BINDINGS if not b.action.startswith("sort") for k in b.key.split(",")}
    assert not set(sorts_of(cls)) & others, "a sort letter also bound to something else in the same view"


def test_the_tables_agree_and_the_kernels_sort_by_min():
    by_letter: dict[str, set[str]] = {}
    for cls, _ in TABLES:
        for letter, key in sorts_of(cls).items():
            by_letter.setdefault(letter, set()).add(cls.SORTS[key].means)
    assert all(len(means) == 1 for means in by_letter.values()), by_letter
    assert sorts_of(KernelsView)["m"] == "min" and sorts_of(OpsView)["c"] == "count" == sorts_of(FramesTable)["c"]
    assert sorts_of(OpsView)["s"] == "self_cpu" == sorts_of(FramesTable)["s"]  # c and s once meant other things


def test_the_bar_cuts_at_whole_entries_and_ends_with_more():
    entries = [Entry(["p"], "show frames", True)] + [Entry([k], f"word {k}") for k in "abcdefghij"]
    for width in (30, 50, 78):
        shown = fitted(entries, width)
        assert shown[-1].text() == "? more" and shown[0].state
        assert len(SEP.join(e.text() for e in shown)) <= width
        assert [e.text() for e in shown[1:-1]] == [e.text() for e in entries[1 : len(shown) - 1]]  # in order
    tiny = fitted([Entry(["m"], "mark 3.91ms and more words", True)], 16)
    assert tiny[0].state and tiny[-1].text() == "? more"  # what is on stays, shortened


def test_where_the_bar_is_cut_the_lower_keep_stays_and_the_order_holds():
    shared = [Entry(["⏎"], "Timeline", keep=(0, 1, 0)), Entry(["e"], "Every column", keep=(0, 1, 3))]
    own = [Entry(list("ncstu"), "sort", keep=(0, 0, 0)), Entry(["b"], "Group by shape", keep=(0, 0, 5))]
    state = Entry(["p"], "show frames", True)
    texts = [e.text() for e in fitted([state, *shared, *own], 64)]
    assert texts == ["p show frames", "⏎ Timeline", "ncstu sort", "b Group by shape", "? more"]  # e gave way
    assert [e.text() for e in fitted([state, *shared, *own], 40)] == ["p show frames", "ncstu sort", "? more"]


@pytest.mark.parametrize(
    "path, letters",
    [(BERT, "ncstagudrRSTGU"), (str(SAMPLES / "a100-train-control.json.gz"), "ncstagudrR")],
    ids=["memory", "no-memory"],
)
async def test_the_ops_bar_keeps_group_by_shape_at_80_columns(path, letters):
    """The ops view's own keys (its sort letters, b) stay at 80 columns; the keys every table shares give way,
    e first (the line above the table says e shows every column whenever it left one out). The memory columns'
    letters (S T G U) only where the trace recorded memory."""
    app = TraceApp([path], use_cache=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_for_main(pilot)
        await press_settled(pilot, "3")
        text = screen.query_one(KeyBar).text()
        assert "b Group by shape" in text and f"  {letters} sort  " in text and len(text) <= 78, text
        assert "e Every column" not in text and text.index(" sort") < text.index("b Group by shape")
        await press_settled(pilot, "b")
        text = screen.query_one(KeyBar).text()
        assert text.startswith("b by shape  ") and " sort  " in text, "what is on, first; b says it, not its key"


async def test_the_bar_at_80x24_says_what_is_on_and_the_views_keys():
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_for_main(pilot)
        bar = screen.query_one(KeyBar)
        await pilot.pause()
        text = bar.text()
        assert text.startswith("p show frames") and text.endswith("? more") and len(text) <= 78
        assert "⏎ Details" in text and "←→↑↓ move" in text and "w/s zoom" in text
        await press_settled(pilot, "l", "m")
        text = bar.text()
        assert text.startswith("m mark ") and "p show frames" in text and text.endswith("? more")
        await press_settled(pilot, "3")
        text = bar.text()
        assert "ncstagudrRSTGU sort" in text and "⏎ Timeline" in text and text.endswith("? more")
        await press_settled(pilot, "/", *"aten", "enter")
        assert bar.text().startswith("/ filter /aten/")
        await press_settled(pilot, "4")
        assert "ncudmxlLDrREMO sort" in bar.text()


async def test_help_lists_every_key_here_with_the_palette():
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for_main(pilot)
        await press_settled(pilot, "question_mark")
        rows = {r[2]: r for _, rs in app.screen.sections for r in rs}
        assert rows["app.palette"][0] == "Ctrl+P" and "palette" in rows["app.palette"][1].lower()
        assert {"timeline.zoom_in", "timeline.pan_left_big", "timeline.next_match", "view.code"} <= set(rows)


async def test_D_sorts_the_kernels_by_their_spread_and_shows_it_at_80_columns():
    """GIVEN BERT's kernels at 80x24, where Std is left out WHEN D is pressed THEN the rows are ordered by their
    standard deviation, the most first and the kernels that ran once (none) last, and Std is shown."""
    app = TraceApp([BERT], use_cache=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_for_main(pilot)
        await press_settled(pilot, "4")
        view = screen.query_one(KernelsView)
        assert view.fitted is not None and "Std" not in view.fitted.headers
        await press_settled(pilot, "D")
        values = [r.std_us for r in view.shown]
        known = [v for v in values if v is not None]
        assert len(known) > 1 and None in values  # kernels that ran many times, and some that ran once
        assert values == sorted(known, reverse=True) + [None] * (len(values) - len(known))
        assert "Std" in view.fitted.headers and "sorted by standard deviation" in view.status()
