"""A counter lane that is zero throughout (an exported D2H bandwidth lane of a run with no D2H copy) is drawn at its
lowest, not as a full bar; a lane flat above zero stays full."""

from __future__ import annotations

import numpy as np
from conftest import SAMPLES

from tui.cli import main
from tui.model.load import load_trace
from tui.model.view.series import cell_values, counter_series, sparkline


def test_a_lane_zero_throughout_is_drawn_at_its_lowest(tmp_path, capsys):
    out = tmp_path / "bert.json"
    assert main(["export", str(SAMPLES / "h100-bert-small.json.gz"), "-o", str(out), "--counters", "bandwidth"]) == 0
    capsys.readouterr()
    lanes = counter_series(load_trace(out, use_cache=False))
    zero = [s for s in lanes if len(s.values) and not s.values.any()]
    assert zero, [s.name for s in lanes]  # BERT's export has a bandwidth lane with no copy in it
    for s in zero:
        drawn = sparkline(cell_values(s, int(s.ts[0]), 1000, 40), s.low, s.high)
        assert drawn.strip() and set(drawn.strip()) == {"▁"}, (s.name, drawn)
    assert sparkline(np.array([5.0, 5.0]), 5.0, 5.0) == "██"  # flat above zero: its level is its whole value
