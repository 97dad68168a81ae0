"""Every figure says what it counts: summed over GPUs or per GPU, self or total, median."""

from __future__ import annotations

import re

from conftest import SAMPLES

from tui.model.analyses.results import Results
from tui.model.load import load_trace
from tui.tables import code as C
from tui.tables import ranks as R
from tui.tables import summary as S
from tui.text.fmt import fmt_time


def test_gpu_time_of_several_gpus_is_summed_per_gpu_and_never_set_against_the_wall():
    a = Results(load_trace(str(SAMPLES / "hta-2rank"), use_cache=False))
    s = a.summary
    assert s.gpus == 2 and S.gpu_idle_us(s) > s.wall_us  # the sum over two GPUs passes the wall time
    lines = {key: text for key, _, text in S.lines(s)}
    for key, us in (("gpu_busy_us", s.gpu_busy_us), ("gpu_idle_us", S.gpu_idle_us(s))):
        assert lines[key].startswith(f"{fmt_time(us)} summed over 2 GPUs: {fmt_time(us / 2)} per GPU, ")
        share = float(re.search(r"([\d.]+)% of the window", lines[key])[1])
        assert share == round(100 * us / 2 / s.wall_us, 1) <= 100
    busy, idle = (float(re.search(r"([\d.]+)% of the window", lines[k])[1]) for k in ("gpu_busy_us", "gpu_idle_us"))
    assert abs(busy + idle - 100) < 0.11
    (label, text), *_ = [(k, v) for k, v in R.job_lines(a.job) if k == "Typical step"]  # one word: typical
    assert "each rank's: min" in text and "the typical step is the median of the steps' elapsed times" in text
    assert "Typical step" in [c.header for c in R.COLUMNS]


def test_one_gpu_says_its_share_of_the_window():
    a = Results(load_trace(str(SAMPLES / "h100-bert-small.json.gz"), use_cache=False))
    lines = {key: text for key, _, text in S.lines(a.summary)}
    assert lines["gpu_idle_us"].endswith("% of the window)") and "summed" not in lines["gpu_idle_us"]


def test_the_code_tables_say_self_and_total():
    a = Results(load_trace(str(SAMPLES / "h100-bert-small.json.gz"), use_cache=False))
    hot = C.hottest(a.code)
    assert hot is not None
    footer = next(f for f in C.footers(a.code) if f.startswith("Launches the most GPU time itself"))
    assert f"(self {fmt_time(hot.self_device_us)}, " in footer and footer.endswith(" of GPU time)")
    assert "Total % GPU" in [c.header for c in C.COLUMNS]
