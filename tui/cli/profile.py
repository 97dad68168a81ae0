"""`tracetui profile` and `tracetui workloads`: capture a workload (profiler_runner, the only code that imports
torch), print torch's table and the verdict, and open the viewer on it."""

from __future__ import annotations

import argparse
from pathlib import Path

from .options import BadUsage, Command, load


def add_profile(sub, command: str | None) -> argparse.ArgumentParser:
    from profiler_runner.cli_args import add_profile_parser

    return add_profile_parser(sub)


def add_workloads(sub, command: str | None) -> argparse.ArgumentParser:
    p = sub.add_parser("workloads", help="list the built-in workloads")
    p.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)
    return p


def cmd_workloads(args: argparse.Namespace) -> int:
    import re
    import textwrap

    from profiler_runner.registry import describe

    from ..reports.formats import terminal_width

    width = terminal_width()
    for line in describe().split("\n"):  # "name  what it runs": what it runs wrapped under itself
        indent = " " * min(len(m.group()) if (m := re.match(r"^\S+ +", line)) else 0, (width or 80) // 2)
        print("\n".join(textwrap.wrap(line, width, subsequent_indent=indent) if width else [line]))
    return 0


class CaptureReader:
    """What `tracetui profile` asks of tracetui after a capture; the new trace is loaded once."""

    def __init__(self, debug: bool) -> None:
        self.debug = debug
        self._loaded: dict[Path, object] = {}

    def _results(self, trace: Path):
        if trace not in self._loaded:
            self._loaded[trace] = load(str(trace), no_cache=False)
        return self._loaded[trace]

    def table(self, trace: Path, sort: str, rows: int) -> str:
        from ..reports import render_ops

        return render_ops(self._results(trace), "text", sort, rows, False)  # type: ignore[arg-type]

    def verdict(self, trace: Path) -> list[str]:
        s = self._results(trace).summary  # type: ignore[attr-defined]
        from ..model.words import duration_as
        from ..reports.formats import terminal_width, wrap

        longest = max((st.dur_us for st in s.steps), default=0.0)  # every step in one unit, the verdict's own way
        steps = ", ".join(f"{st.name} {duration_as(st.dur_us, longest)}" for st in s.steps)
        lines = [f"verdict: {s.verdict} ({s.reason})"] + ([f"steps: {steps}"] if steps else [])
        return wrap(lines, terminal_width(), "    ")  # the terminal's width, as the summary's prose

    def job(self, folder: Path) -> list[str]:
        """A folder of rank traces just written: the ranks table and what the job shows (tracetui ranks)."""
        from ..model.jobs import run_job
        from ..reports.ranks import render_ranks

        return [render_ranks(run_job(folder), "text")]

    def open(self, trace: Path) -> int:
        from . import view

        args = argparse.Namespace(
            traces=[str(trace)], compare=False, no_cache=False, debug=self.debug, graph_capture=None
        )
        args.initial_view = "overview"  # the view that shows the verdict just printed
        return view.cmd_open(args)


def cmd_profile(args: argparse.Namespace) -> int:
    import importlib.util

    from profiler_runner.entry import run

    from .install import torch_hint_pipx

    if importlib.util.find_spec("torch") is None and (hint := torch_hint_pipx()):
        raise BadUsage(hint)  # pip install would not reach pipx's environment

    return run(args, CaptureReader(args.debug))


COMMANDS = {"profile": Command(add_profile, cmd_profile), "workloads": Command(add_workloads, cmd_workloads)}
