"""A re-open with the same source files reads each stored value's name back (code_stamp.py), never walking the code."""

from __future__ import annotations

import shutil

import pytest
from conftest import SAMPLES

import tui.model.analysis as analysis
from tui.model import code_id, code_stamp, load_trace
from tui.model.analyses.results import Results
from tui.model.load.cachedir import entry_dir


@pytest.fixture
def trace(tmp_path, monkeypatch):
    monkeypatch.setattr(code_id, "_FILES_NAME_THE_CODE", True)  # as in a fresh process: the files are the code
    dst = tmp_path / "traces" / "b300-moe-small.json.gz"
    dst.parent.mkdir()
    shutil.copy(SAMPLES / dst.name, dst)
    return dst


def _walks(monkeypatch) -> list[str]:
    """Count the fingerprints walked from now on."""
    walked: list[str] = []
    real = analysis.derived.stored_name

    def counted(self, owner, prefix=""):
        walked.append(self.name)
        return real(self, owner, prefix)

    monkeypatch.setattr(analysis.derived, "stored_name", counted)
    return walked


def test_a_reopen_reads_the_names_back_and_the_same_values(trace, monkeypatch):
    first = Results(load_trace(trace))
    summary, ops = first.summary, first.ops
    alias = list((entry_dir(trace) / "derived").glob(f"summary#*@{code_stamp.stamp()}.msgpack"))
    assert len(alias) == 1 and alias[0].read_bytes().decode() == Results.summary.stored_name(Results)
    walked = _walks(monkeypatch)
    again = Results(load_trace(trace))
    assert again.summary == summary and again.ops == ops
    assert walked == [], "the names came from the entry, not from walking the code"


def test_other_source_files_walk_the_code_again_and_keep_one_alias(trace, monkeypatch):
    assert Results(load_trace(trace)).summary is not None
    monkeypatch.setattr(analysis, "stamp", lambda: "0123456789abcdef")  # a source file changed
    walked = _walks(monkeypatch)
    assert Results(load_trace(trace)).summary is not None
    assert "summary" in walked
    names = [f.name for f in (entry_dir(trace) / "derived").glob("summary#*")]
    assert names == ["summary#tui.model.analyses.results.Results@0123456789abcdef.msgpack"], names


def test_forget_turns_the_shortcut_off(trace, monkeypatch):
    assert Results(load_trace(trace)).summary is not None
    code_id.forget()  # the running code may differ from its files (tests that patch code)
    walked = _walks(monkeypatch)
    assert Results(load_trace(trace)).summary is not None
    assert "summary" in walked


def test_the_stamp_names_the_files_as_they_are(tmp_path, monkeypatch):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "a.py").write_text("x = 1\n")
    (pkg / "sub" / "b.py").write_text("y = 2\n")
    (pkg / "notes.txt").write_text("not code")
    monkeypatch.setattr(code_stamp, "ROOT", pkg)

    def fresh() -> str:
        code_stamp.stamp.cache_clear()
        return code_stamp.stamp()

    before = fresh()
    assert fresh() == before
    (pkg / "__pycache__").mkdir()
    (pkg / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"bytecode")  # Python's (and numba's) caches
    (pkg / "a.pyc").write_bytes(b"bytecode")
    assert fresh() == before, "caches are no code"
    (pkg / "sub" / "b.py").write_text("y = 30\n")
    second = fresh()
    assert second != before
    (pkg / "notes.txt").write_text("other text")  # the data the code reads (the GPU table) counts as code
    assert fresh() not in (before, second)
    code_stamp.stamp.cache_clear()


def test_a_changed_gpu_table_makes_the_roofline_again(tmp_path, monkeypatch):
    """A fresh-eyes run's case: the GPU table edited (a git pull on an editable install) left a cached trace's
    roofline on the old H100 bandwidth. The table's text is part of the roofline's fingerprint; the stamp of the
    package's files, data included, is what makes the fingerprint be walked again."""
    from tui.model import samples
    from tui.model.analyses.roofline import peaks

    monkeypatch.setattr(code_id, "_FILES_NAME_THE_CODE", True)
    dst = tmp_path / "h100-bert-small.json.gz"
    shutil.copy(samples.sample("h100-bert-small").path, dst)
    first = Results(load_trace(dst)).roofline
    assert first.device is not None and first.device.name == "H100 SXM" and first.device.peak_gbps == 3350
    edited = peaks.GPU_TABLE.replace("peak_gbps = 3350", "peak_gbps = 9999", 1)  # H100 SXM's, the first
    assert edited.count("9999") == 1
    monkeypatch.setattr(peaks, "GPU_TABLE", edited)
    peaks.table.cache_clear()
    monkeypatch.setattr(code_id, "_MEMO", {})  # a new process: fingerprints not yet walked
    monkeypatch.setattr(code_id, "_PIECES", {})
    monkeypatch.setattr(analysis, "stamp", lambda: "fedcba9876543210")  # what the edited file makes of the stamp
    try:
        again = Results(load_trace(dst)).roofline
    finally:
        peaks.table.cache_clear()
    assert again.device is not None and again.device.peak_gbps == 9999
