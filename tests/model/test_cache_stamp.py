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
    (pkg / "notes.txt").write_text("other text")
    assert fresh() == before, "only .py files count"
    (pkg / "sub" / "b.py").write_text("y = 30\n")
    assert fresh() != before
    code_stamp.stamp.cache_clear()
