"""A sequence's fusion saving says what it is made of: the launch calls fusing takes away are CPU time, which the
table's Total (device time) leaves out, so a saving can pass Total and says so."""

from __future__ import annotations

from conftest import SAMPLES

from tui.model.analyses.results import Results
from tui.model.load import load_trace
from tui.reports.sequences import render_sequences, sequences_document
from tui.tables import sequences as S


def test_a_saving_larger_than_its_total_says_the_launch_calls_are_it(monkeypatch):
    """GIVEN the H100 BERT sample, whose path runs through the CPU WHEN nn.Module: BertLayer's 12 kernels are fused
    THEN its saving (236.8 us) passes its Total (233.2 us of device time): the table says the 44 launch calls taken
    away are all of it, and the JSON splits it (it said "Fused saves 0.24 ms" beside "Total 233.182us" unexplained)."""
    a = Results(load_trace(SAMPLES / "h100-bert-small.json.gz", use_cache=False))
    rows = {r["op"]: r for r in sequences_document(a)["rows"]}
    layer = rows["nn.Module: BertLayer"]
    assert layer["fused_saving_us"] > layer["device_total_us"] == 233.182
    assert layer["launch_calls_gone"] == 44
    assert layer["fused_saving_launches_us"] == layer["fused_saving_us"]  # the kernels twice as fast add nothing
    monkeypatch.setenv("TRACETUI_COLUMNS", "0")
    text = render_sequences(a, "text")
    assert "From launches" in text.splitlines()[0]
    assert (
        "nn.Module: BertLayer saves 236.8 us, more than its Total (233.2 us): 236.8 us of it is the 44 launch calls "
        "fusing takes away (CPU time, not in Total), and its kernels twice as fast add nothing." in text
    )
    for r in sequences_document(a)["rows"]:  # every solved row: the launches' part is part of the saving
        if r["fused_saving_us"] is not None:
            assert 0 <= r["fused_saving_launches_us"] <= r["fused_saving_us"] + 1e-9
    assert S.passes_total([]) == []
