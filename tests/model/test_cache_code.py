"""The cache knows which code made it: a changed rule is recomputed on its own, a corrupt value is rebuilt."""

from __future__ import annotations

import shutil
import subprocess
import sys

import numpy as np
import pytest
from conftest import SAMPLES

import tui.model.analyses.explain.rules as explain_rules
import tui.model.analyses.ops as ops_module
from tui.model import code_id, load_trace
from tui.model.analyses.results import Results
from tui.model.analysis import derived
from tui.model.load.cache import EntryStore, entry_dir

STORED = sorted(n for cls in Results.__mro__ for n, v in vars(cls).items() if isinstance(v, derived) and v.codec)


@pytest.fixture
def trace(tmp_path):
    dst = tmp_path / "traces" / "b300-moe-small.json.gz"
    dst.parent.mkdir()
    shutil.copy(SAMPLES / dst.name, dst)
    return dst


@pytest.fixture
def saves(monkeypatch):
    """The names of the values written to a store (each one a computation: read-back values are not written)."""
    written: list[str] = []
    for method in ("put_blob", "put_arrays"):
        original = getattr(EntryStore, method)

        def put(self, name, value, original=original):
            written.append(name.partition("@")[0])
            return original(self, name, value)

        monkeypatch.setattr(EntryStore, method, put)
    return written


@pytest.fixture(autouse=True)
def fresh_fingerprints():
    """Each test, and what runs after it, fingerprints the code as it is then (as a new process would)."""
    code_id.forget()
    yield
    code_id.forget()


def _open(path) -> dict:
    results = Results(load_trace(path))
    return {name: getattr(results, name) for name in STORED}


def _same(a, b) -> bool:
    if hasattr(a, "__dataclass_fields__") and any(isinstance(v, np.ndarray) for v in vars(a).values()):
        return all(_same(getattr(a, k), getattr(b, k)) for k in vars(a))
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    return a == b


def _no_findings(a, s):
    return []


def test_a_changed_rule_is_recomputed_and_every_other_value_read_back(trace, saves, monkeypatch):
    before = _open(trace)
    assert sorted(saves) == STORED  # the first open computes and keeps each value once
    fired = {f.rule for f in before["findings"]}
    rule = next(r for r in explain_rules.RULES if r.id in fired)
    saves.clear()
    with monkeypatch.context() as patch:
        patch.setattr(rule.find, "__code__", _no_findings.__code__)  # the rule's code changes: it finds nothing now
        code_id.forget()  # as the next process would see the changed code
        after = _open(trace)
        assert saves == ["findings"], "only the findings are recomputed"
        assert {f.rule for f in after["findings"]} == fired - {rule.id}
        assert all(_same(before[n], after[n]) for n in STORED if n != "findings")
        saves.clear()
        assert [f.rule for f in _open(trace)["findings"]] == [f.rule for f in after["findings"]]
        assert saves == [], "the recomputed findings are kept: the next open reads them back"
    derived_dir = entry_dir(trace) / "derived"
    assert len(list(derived_dir.glob("findings@*"))) == 1, "the findings of the old code are removed"
    code_id.forget()
    assert _open(trace)["findings"] == before["findings"] and saves == ["findings"]  # the code back: recomputed


def test_a_changed_table_recomputes_what_is_built_on_it_and_nothing_else(monkeypatch):
    """ops_table feeds the ops tables, the summary (its top ops) and the findings (the summary): those change."""
    before = {n: getattr(Results, n).stored_name(Results) for n in STORED}
    monkeypatch.setattr(ops_module.ops_table, "__code__", _no_findings.__code__)
    code_id.forget()
    after = {n: getattr(Results, n).stored_name(Results) for n in STORED}
    changed = {n for n in STORED if before[n] != after[n]}
    assert {"ops", "ops_by_shape", "summary", "findings"} <= changed
    assert not changed & {"nesting", "links", "self_ns", "lane_arrays", "kernels", "kernel_footprints", "code"}


def test_a_changed_rule_table_changes_the_findings_fingerprint_only(monkeypatch):
    """A module-level table counts as code: one rule fewer in RULES names other findings, and nothing else."""
    before = {n: getattr(Results, n).stored_name(Results) for n in STORED}
    monkeypatch.setattr(explain_rules, "RULES", explain_rules.RULES[1:])
    code_id.forget()
    after = {n: getattr(Results, n).stored_name(Results) for n in STORED}
    assert {n for n in STORED if before[n] != after[n]} == {"findings"}


def test_another_package_version_recomputes_everything(trace, saves, monkeypatch):
    before = _open(trace)
    saves.clear()
    monkeypatch.setattr(code_id, "version", lambda: "99.0")
    code_id.forget()
    after = _open(trace)
    assert sorted(saves) == STORED
    assert all(_same(before[n], after[n]) for n in STORED)


def test_another_process_names_the_code_alike():
    """The pool's workers and the next run must find what this one kept: the fingerprint is the same everywhere."""
    here = [getattr(Results, n).stored_name(Results) for n in STORED]
    code = (
        "from tui.model.analyses.results import Results\n"
        f"print(' '.join(getattr(Results, n).stored_name(Results) for n in {STORED!r}))"
    )
    there = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert there == here and all("@" in n for n in here)


@pytest.mark.parametrize("how", ["garbage", "truncated", "another type"])
def test_a_corrupt_blob_is_recomputed_not_trusted(trace, saves, how):
    before = _open(trace)
    (blob,) = (entry_dir(trace) / "derived").glob("summary@*.msgpack")
    data = blob.read_bytes()
    blob.write_bytes(
        {"garbage": b"\xc1\xff not msgpack", "truncated": data[: len(data) // 2], "another type": b"\x01"}[how]
    )
    saves.clear()
    after = _open(trace)
    assert saves == ["summary"] and after["summary"] == before["summary"]
    assert blob.read_bytes() == data  # rebuilt as it was


@pytest.mark.parametrize("how", ["garbage", "header only", "other dtype"])
def test_a_corrupt_npy_is_recomputed_not_trusted(trace, saves, how):
    depth = np.array(_open(trace)["nesting"].depth)  # a copy: the file is overwritten in place below
    (npy,) = (entry_dir(trace) / "derived").glob("nesting@*.depth.npy")
    if how == "garbage":
        npy.write_bytes(b"\x93NUMPY garbage")
    elif how == "header only":
        npy.write_bytes(npy.read_bytes()[:128])
    else:
        np.save(npy, np.load(npy).astype(np.float32))
    saves.clear()
    after = _open(trace)
    assert saves == ["nesting"] and np.array_equal(after["nesting"].depth, depth)
    assert isinstance(after["lane_arrays"].order, np.memmap)  # what was kept after it is read back as it was


def test_a_fingerprint_does_not_depend_on_what_the_process_read_before(trace):
    """The codecs are built on first use (store.Blob), and decoding a type leaves msgspec's cache on its class: the
    names of the code are the same before any value is read or computed and after all of them were."""
    before = {n: getattr(Results, n).stored_name(Results) for n in STORED}
    _open(trace)  # computes, keeps and reads back every stored value
    code_id.forget()
    assert {n: getattr(Results, n).stored_name(Results) for n in STORED} == before
