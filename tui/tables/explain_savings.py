"""What each explain finding's fix would buy, in words: the what-if sentence (the critical report's, from the same
spec), the headline beside the finding's title, why it saves nothing, and why no what-if applies."""

from __future__ import annotations

from typing import Any

from ..model.analyses.critical import parse_spec
from ..model.analyses.explain.findings import Finding, Saving
from ..model.analyses.explain.savings import LITTLE
from ..model.words import saving_said
from .critical import TITLES, caveat_notes, said, us, when

# the caveats a finding's what-if line repeats: what the prediction could not model, or counted that a warm step
# would not pay
LIMITS = ("graph_syncs", "one_time_launches")

WHY = {  # a fix that saves (next to) nothing: why
    "gpu-waits": "it is GPU work, and the GPU waits for the CPU: CPU work is {share} of the path",
    "cpu-waits": "it is CPU work, and the CPU waits for the GPU: {bound} is {share} of the path",
    "off-path": "it is (all but) off the critical path of {window}",
    "absent": "none of it runs in {window}, the step the verdict reads",
}
NO_SAVING = {  # no what-if applies: why
    "note": "a note on what the trace shows, not a change to make",
    "profiler": "the profiler's own cost, not your code's",
    "one-time": "a one-time cost, outside the steady state: warm up before profiling",
    "changes-work": "the fix changes the work itself (more rows per call); no what-if models that",
    "gpu-bound": "the GPU's own work bounds the run: what faster kernels buy is in the GPU findings",
    "no-peaks": "the GPU's peak rates are unknown (tracetui roofline --gpu NAME picks them)",
    "at-roof": "it already runs at its roof",
    "in-use": "the run already replays most of its work from CUDA graphs: what is left is outside them (the note)",
    "no-window": "the trace has no critical path to solve it on",
    "job": "a folder of ranks: what-ifs work on one rank's trace file",
    "same-fix": "the same change as {other}, which says what it saves",
}


def sentence(s: Saving) -> str:
    """The saving as `tracetui critical --what-if SPEC` says it."""
    return said([parse_spec(s.spec)], [s.matched], s.length_ns, s.after_ns, s.bound_before, s.bound_after)


def why(s: Saving) -> str:
    """Why a fix saves (next to) nothing ("" when it saves something)."""
    if not s.why:
        return ""
    bound = TITLES.get(s.bound_before, s.bound_before)
    return WHY[s.why].format(share=f"{s.bound_share:.0%}", bound=bound, window=s.window)


def headline(f: Finding) -> str:
    """Beside the title: 'saves 0.91 ms of 6.94 ms (13%)', 'saves next to nothing (22.0 us of 5.10 ms)', 'saves
    nothing' ('' for a note)."""
    s = f.saving
    if s is None:
        return ""
    if s.saving_ns <= 0:
        return "saves nothing"
    by, of = saving_said(s.length_ns / 1000.0, s.after_ns / 1000.0)  # in one unit, as the what-if's sentence
    if s.share < LITTLE:  # a figure still: it is ordered among the savings, by what it saves
        return f"saves next to nothing ({by} of {of})"
    return f"saves {by} of {of} ({s.share:.0%})"


def biggest_saving(findings: list[Finding]) -> str | None:
    """The overview's reading of the findings: the fix worth most on the critical path, or that none is worth much
    (None: no finding has a what-if)."""
    solved = [f for f in findings if f.saving is not None]
    if not solved:
        return None
    top = max(solved, key=lambda f: f.saving.saving_ns if f.saving else 0)
    s = top.saving
    assert s is not None
    if s.share < LITTLE:
        return f"No finding's fix saves {LITTLE:.0%} of the critical path of {s.window} ({when(s.length_ns)}): see the path (8)."
    title = top.title if top.title[:2].isupper() else top.title[0].lower() + top.title[1:]
    return f"The fix worth most on the critical path of {s.window}: {title}, which {headline(top)} (below)."


# Where the CPU bounds the path, fusion's what-if (faster kernels) saves nothing, yet a fused sequence also launches
# once rather than once per kernel, which `kernels --sequences` re-solves: said, so that the two do not read as a
# contradiction ("saves nothing" here, "Fused saves 0.24 ms" there).
FEWER_LAUNCHES = {
    "roofline-memory": " Fused, they would also launch once per sequence rather than once per kernel, which this "
    "what-if leaves out: `tracetui kernels --sequences` (view 9) counts that too."
}


def what_if_line(f: Finding) -> str:
    """The line under a finding's note: its what-if, and why it saves nothing where it does ('' for a note)."""
    if f.saving is None:
        return ""
    reason = why(f.saving)
    limits = "".join(f" Note: {n}." for n in caveat_notes(f.saving.caveats, LIMITS))
    launches = FEWER_LAUNCHES.get(f.rule, "") if f.saving.why == "gpu-waits" else ""
    return f"What-if: {sentence(f.saving)}" + (f" ({reason})." if reason else ".") + launches + limits


def no_saving(f: Finding) -> str:
    """Why no what-if applies to a finding ("" when one does)."""
    code, _, other = f.no_saving.partition(":")
    return NO_SAVING.get(code, code).format(other=repr(other)) if code else ""


def saving_fields(f: Finding) -> dict[str, Any]:
    """A finding's saving as JSON: saving_us (null where no what-if applies, with no_saving saying why) and the what-if."""
    s = f.saving
    if s is None:
        return {"saving_us": None, "what_if": None, "no_saving": no_saving(f) or None}
    return {
        "saving_us": us(s.saving_ns),
        "what_if": {
            "spec": s.spec,
            "window": s.window,
            "length_us": us(s.length_ns),
            "saving_share": s.share,
            "bound_by": s.bound_after,
            "sentence": sentence(s),
            "notes": caveat_notes(s.caveats, LIMITS),
            "why": why(s) or None,
        },
        "no_saving": None,
    }
