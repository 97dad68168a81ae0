"""The wall time is the span of the CPU threads and GPU streams, and its reading says so: the overview said "from
the first to the last event" (47.538 ms) beside a ruler spanning every event, the profiler's own spans too
(47.710 ms)."""

from __future__ import annotations

from conftest import SAMPLES

from tui.model.analyses.explain.readings import fact_readings
from tui.model.analyses.results import Results
from tui.model.load import load_trace


def test_the_wall_time_is_the_lanes_span_and_the_reading_names_what_it_leaves_out():
    a = Results(load_trace(SAMPLES / "h100-bert-small.json.gz", use_cache=False))
    t = a.trace
    real = [k for k, tr in enumerate(t.tracks) if tr.kind != "meta"]
    on = [i for i in range(t.n) if int(t.x.track[i]) in set(real)]
    start, end = min(int(t.x.ts[i]) for i in on), max(int(t.x.ts[i] + t.x.dur[i]) for i in on)
    assert a.summary.wall_us == (end - start) / 1000
    every = (int((t.x.ts + t.x.dur).max()) - int(t.x.ts.min())) / 1000
    assert every > a.summary.wall_us  # BERT's profiler spans run past its lanes: 4.967 ms against 4.871 ms
    said = fact_readings(a.summary)["wall_us"]
    assert "CPU threads and GPU streams" in said and "profiler's own spans" in said
