"""`tracetui demo`: the viewer on a real trace shipped inside the package, so a machine with no trace of its own sees
the tool work; `--list` names the samples, which every command also takes as demo:NAME."""

from __future__ import annotations

import argparse

from .options import BadUsage, Command, screenshot_opt, trace_opts

EPILOG = """\
prints: nothing: opens the viewer on the sample; with --list, each sample's name, size and what it shows
defaults: h100-bert-small, an H100 BERT inference run with every profiler flag on (70 KB)
example: tracetui demo
example: tracetui demo --list
example: tracetui summary demo:h100-bert-small
example: tracetui diff demo:cpu-matmul-eager demo:cpu-matmul-compiled"""


def add_demo(sub, command: str | None) -> argparse.ArgumentParser:
    """Register `tracetui demo`."""
    p = sub.add_parser(
        "demo",
        help="open the viewer on a real trace shipped with tracetui (--list: the samples)",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "name", nargs="?", metavar="NAME", help="the sample to open (default: h100-bert-small); commands take demo:NAME"
    )
    p.add_argument("--list", action="store_true", help="name the shipped samples, their sizes and what each shows")
    screenshot_opt(p)
    trace_opts(p)
    return p


def cmd_demo(args: argparse.Namespace) -> int:
    from ..model.samples import DEFAULT, PREFIX

    if args.list:
        if args.name:
            raise BadUsage("demo --list names every sample; give NAME without --list to open one")
        print(listing())
        return 0
    from . import view

    args.traces, args.compare = [PREFIX + (args.name or DEFAULT.name)], False
    return view.cmd_open(args)


def listing() -> str:
    """The samples, one line each (name, size, what it shows), then how to use them and where their licences are."""
    from ..model.samples import ATTRIBUTION, DEFAULT, SAMPLES
    from ..text.fmt import fmt_memory

    width = max(len(s.name) for s in SAMPLES)
    sizes = [fmt_memory(s.size) for s in SAMPLES]
    wide = max(len("SIZE"), *map(len, sizes))  # a size of six digits widens the column, never the row
    rows = [f"{'NAME':<{width}}  {'SIZE':>{wide}}  WHAT"]
    rows += [f"{s.name:<{width}}  {size:>{wide}}  {s.what}" for s, size in zip(SAMPLES, sizes, strict=True)]
    return "\n".join(
        [
            *rows,
            "",
            f"tracetui demo opens {DEFAULT.name} in the viewer, tracetui demo NAME another;",
            f"any command takes demo:NAME as its trace: tracetui summary demo:{DEFAULT.name}",
            "Where each comes from, and its licence:",
            str(ATTRIBUTION),
        ]
    )


COMMANDS = {"demo": Command(add_demo, cmd_demo)}
