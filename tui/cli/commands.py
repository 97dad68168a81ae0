"""The table of commands (pip's commands/__init__.py): each command's group module, imported only to add its
parser or to run it; the parser; `main`, with its exit codes.

Exit codes: 0 ok; 2 bad usage or an unreadable trace (one line on stderr); 3 `diff --fail-if-slower`; 1 a bug
(one line, the traceback with --debug); 130 Ctrl-C.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ..model import settings
from . import replay, stops
from .captures import run as run_command
from .options import BadUsage, Command, tell
from .output import guarded_streams, output_failure, plain_warnings

if TYPE_CHECKING:
    from pathlib import Path

GROUPS = {  # command -> its group module in tui/cli, in the order --help lists them
    "open": "view",
    "demo": "demo",
    "summary": "tables",
    "steps": "tables",
    "ops": "tables",
    "kernels": "tables",
    "code": "tables",
    "memory": "tables",
    "roofline": "tables",
    "ranks": "tables",
    "diff": "tables",
    "explain": "tables",
    "critical": "tables",
    "breakdown": "breakdown",
    "export": "export",
    "profile": "profile",
    "workloads": "profile",
    "watch": "watch",
    "sql": "sql",
    "mcp": "mcp",
}
# The headless reports: a trace (or two, or a folder of ranks) in, text, CSV, JSON or markdown out.
REPORTS = {name for name, group in GROUPS.items() if group in ("tables", "breakdown")}
# The commands that load, write and exit in one go: the cycle collector off. Not ranks (its workers' processes) nor
# sql (a prompt that may stay open).
ONE_SHOT = (REPORTS - {"ranks"}) | {"export"}
# Those where SIGTERM and SIGHUP exit as Ctrl-C does, their cleanup run: ranks too (killed outright, it left its
# pool's semaphores to Python's resource tracker, which said so on stderr, and in /dev/shm when a closed terminal
# ended the tracker with it).
TERMINATED_AS_EXIT = ONE_SHOT | {"ranks"}
BIG_ARRAYS = ONE_SHOT | {"open", "demo", "ranks"}  # commands whose loads tune the allocators first (heap.py)
# commands whose output is not ours to show as text: the user's script's (a progress bar's \r stays), a protocol's
RAW_OUTPUT = {"profile", "mcp"}


def command_of(name: str) -> Command:
    """A command's entry, its group module imported now."""
    return importlib.import_module(f"{__package__}.{GROUPS[name]}").COMMANDS[name]


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr and exit 2 (the usage is in --help)."""

    def error(self, message: str):  # type: ignore[override]
        self._fail(message, self.prog.split(" ", 1)[-1] if " " in self.prog else None)

    def _fail(self, message: str, command: str | None):
        where = f"tracetui {command} --help" if command else "tracetui --help"
        tell(f"tracetui: error: {message} (see {where})", error=True)  # one line in a log, wrapped in a terminal
        self.exit(2)

    def parse_args(self, args=None, namespace=None):  # type: ignore[override]
        """As argparse's, but words no command takes send to that command's help (argparse finds them after the
        command's parser has run, and said `tracetui --help`)."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            self._fail(f"unrecognized arguments: {' '.join(extras)}", getattr(parsed, "command", None))
        return parsed

    def _print_message(self, message: str, file=None) -> None:  # type: ignore[override]
        """As argparse's, but help that cannot be written (a full disk, a closed stdout) is said, not swallowed."""
        if message:
            (file or sys.stderr).write(message)


class _Version(argparse.Action):
    """--version (tracetui's, Python's, torch's), reading metadata only when asked (importlib.metadata costs every
    start 20 ms)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None) -> None:  # noqa: A002
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        from .help import versions

        print(versions())
        parser.exit()


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line. With a command's name, that command's parser alone (building all twenty cost a cached
    command 10 ms, and imported every group module); with "" (no command named: --version, --help) all of them,
    no sort help reading its table; with None, all of them whole."""
    from .help import Help, add_epilogs

    parser: argparse.ArgumentParser = OneLineParser(
        prog="tracetui", description="A terminal viewer for PyTorch profiler traces.", formatter_class=Help
    )
    parser.add_argument("--version", action=_Version, help="show program's version number and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in [command] if command in GROUPS else GROUPS:
        command_of(name).add(sub, command)
    add_epilogs(sub)
    return parser


def _command(argv: Sequence[str] | None) -> str | None:
    """The command named on the command line; "" when none is (--version, --help), None when the first word is
    not a command (the whole parser, to say so)."""
    words = [a for a in (sys.argv[1:] if argv is None else argv) if not a.startswith("-")]
    if not words:
        return ""
    return words[0] if words[0] in GROUPS else None


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. A headless command over one or two traces runs with the cycle collector off (it makes
    no cycles worth collecting, and the collector walked the imports' objects 20 ms of a 0.3 s cached start). A
    stop (Ctrl-C, SIGTERM, SIGHUP) ends it quietly with its exit code, wherever it lands (stops.py)."""
    command = _command(argv)
    was = gc.isenabled()
    code = 130
    try:
        with stops.watched():
            try:
                code = _prepared_run(command, argv)
            except Exception as exc:  # a stop that came out as another exception (an import's, numba's)
                stop = stops.as_stop(exc)
                if stop is None:
                    raise
                code = stops.code_of(stop)
    except KeyboardInterrupt:  # before the command ran (its imports), or while its last cache writes finish
        pass
    except SystemExit:  # SIGTERM's or SIGHUP's exit (stops.terminated_as_exit); --help and --version go on up
        if stops.received() is None:
            raise
    finally:
        if was:
            gc.enable()
    code = stops.received() or code  # the first stop's code, whatever came out after it (a second stop, a dropped one)
    if argv is None and (code == 130 or stops.received() is not None):
        stops.now_if_threads_run(code)
    if argv is None:  # its work done or stopped, the program only exits now (Python's hooks: the pools' joins)
        stops.deaf_to_ctrl_c()
    if argv is None and command in ONE_SHOT and stops.received() is None:
        from ..process.leave import at_once

        at_once(code)  # its output written: no teardown after it (leave.py)
    return code


def _prepared_run(command: str | None, argv: Sequence[str] | None) -> int:
    """The command run, this process tuned for it first (warnings, settings, allocators, the cycle collector)."""
    plain_warnings()
    settings.check()  # a bad setting is said now, whether or not the command reads it
    if command in BIG_ARRAYS:
        from ..process.heap import for_big_arrays

        for_big_arrays()
    if command in ONE_SHOT:
        gc.disable()
    with guarded_streams(visible=command not in RAW_OUTPUT):
        return _said_output_failure(command, argv)


def _said_output_failure(command: str | None, argv: Sequence[str] | None) -> int:
    """The command run; when its output could not be written (a full disk, a closed stdout), one line saying why."""
    try:
        try:
            args = build_parser(command).parse_args(argv)  # --help and --version leave here, nothing heavy imported
            record = replay.record_for(args)
            if replay.play(record):  # the same report of the same cached trace: as printed last time
                return 0
            with (
                _written_behind(command in BIG_ARRAYS),
                stops.terminated_as_exit(command in TERMINATED_AS_EXIT, argv is None),
            ):
                return _run(args, argv, record)
        finally:  # --help and --version leave by SystemExit, an error by its exit code: all flushed here, in
            sys.stdout.flush()  # the guard, so a buffered stdout's write error is said, not ignored at exit
    except BrokenPipeError:  # the reader is gone (| head): nothing more to say, as with any Unix tool
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError:
        failure = output_failure()
        if failure is None:
            raise
        tell(f"tracetui: error: cannot write the output: {failure}", error=True)
        return 2


@contextmanager
def _written_behind(on: bool) -> Iterator[None]:
    """A first load's cache entry written beside the analyses (model/load/behind.py), finished before the command
    returns; what could not be written is said as a warning."""
    if not on:
        yield
        return
    from ..model.load.behind import written_behind

    with written_behind() as problems:
        yield
    for problem in problems:
        print(f"tracetui: warning: {problem}", file=sys.stderr)


def _run(args: argparse.Namespace, argv: Sequence[str] | None, record: Path | None) -> int:
    """The command run (its output kept in record, where given, when it succeeds); an error said in one line."""
    from profiler_runner.errors import ProfileError, UserCodeError

    from ..model.errors import QueryError, TraceError
    from ..tables.base import UnknownSort

    try:
        with _early_workers(args), replay.recording(record) as writes:
            code = run_command(command_of(args.command).run, args)
        sys.stdout.flush()  # a full disk or a closed stdout is said here, not by Python at exit
        if code == 0:
            replay.keep(record, writes)
        return code
    except UserCodeError as exc:  # the user's code raised: their frames, exit 2 (1 stays for our own bugs)
        print(exc.report(), file=sys.stderr)
        return 2
    except (TraceError, BadUsage, ProfileError, UnknownSort, QueryError) as exc:
        tell(f"tracetui: error: {exc}", error=True)
        return 2
    except KeyboardInterrupt:
        if argv is None:
            stops.now_if_threads_run(130)
        return 130
    except OSError as exc:
        if output_failure() is None and not isinstance(exc, BrokenPipeError):
            return _internal_error(exc, args)
        raise  # said by _said_output_failure, as for --help and --version; a reader gone (| head) is quiet
    except Exception as exc:  # noqa: BLE001 - the last resort of the CLI: one line unless --debug
        stop = stops.as_stop(exc)
        if stop is not None:  # a stop that came out as another exception: it goes on up as itself
            raise stop from None
        return _internal_error(exc, args)


def _internal_error(exc: BaseException, args: argparse.Namespace) -> int:
    """A bug of ours: one line, the traceback with --debug; exit 1."""
    if getattr(args, "debug", False):
        traceback.print_exc()
    else:
        print(
            f"tracetui: internal error: {type(exc).__name__}: {exc} (run with --debug for the traceback)",
            file=sys.stderr,
        )
    return 1


def _in_cache(path: str) -> bool:
    """Whether the file's cache entry is there (then no worker starts, and the decode's modules are not imported)."""
    from pathlib import Path

    from ..model.load.cachedir import has_entry

    return has_entry(Path(path))


@contextmanager
def _early_workers(args: argparse.Namespace) -> Iterator[None]:
    """A command that loads one big file not yet in the cache starts its decode's workers before its own imports
    (model/load/parts.py, start_workers); those no load took are stopped when it ends."""
    paths = getattr(args, "traces", None) or [getattr(args, "trace", None)]  # open: its one trace
    path = paths[0] if len(paths) == 1 else None
    use_cache = not getattr(args, "no_cache", False)
    if args.command not in BIG_ARRAYS or not isinstance(path, str) or (use_cache and _in_cache(path)):
        yield
        return
    from ..model.load.parts import drop_workers, start_workers

    try:
        start_workers(path, use_cache=use_cache)
        yield
    finally:
        drop_workers(exiting=True)
