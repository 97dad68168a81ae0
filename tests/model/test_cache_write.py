"""Writing a cache entry while other processes open the same trace: a sound entry in place is kept, a broken one replaced."""

from __future__ import annotations

from conftest import copy_sample

from tui.model import load_trace
from tui.model.analyses.results import Results
from tui.model.load import cache
from tui.model.load.cachedir import entry_dir


def test_a_sound_entry_in_place_is_kept_with_what_another_process_added(tmp_path, isolated_cache):
    path = copy_sample(tmp_path)
    first = Results(load_trace(path))
    summary = first.summary  # kept in the entry's derived/, as a process that opened it first would
    kept = {f.name for f in (entry_dir(path) / "derived").iterdir()}
    meta = (entry_dir(path) / "meta.json").stat().st_ino
    late = load_trace(path, use_cache=False)  # a process that parsed the file while the entry was written
    assert cache.write(path, late)
    assert (entry_dir(path) / "meta.json").stat().st_ino == meta, "the entry in place was not replaced"
    assert kept <= {f.name for f in (entry_dir(path) / "derived").iterdir()}
    again = Results(load_trace(path))
    assert again.trace.report.from_cache and again.summary == summary
    assert not [p for p in isolated_cache.rglob(".*") if not p.name.startswith(".tracetui-")], "nothing left aside"


def test_a_broken_entry_is_moved_aside_and_replaced(tmp_path, isolated_cache):
    path = copy_sample(tmp_path)
    assert Results(load_trace(path)).summary is not None
    (entry_dir(path) / "meta.json").unlink()  # what a removal half done leaves: derived/ without its entry
    assert load_trace(path).report.from_cache is False
    again = load_trace(path)
    assert again.report.from_cache and again.n == load_trace(path, use_cache=False).n
    assert not [p for p in isolated_cache.rglob(".*") if not p.name.startswith(".tracetui-")], "nothing left aside"
