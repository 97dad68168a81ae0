"""Every text report fits an 80-column terminal, whatever it is given: a file, a folder of captures, a folder of
ranks, demo:NAME; sql (answers and --schema), workloads, watch and a snapshot too. Each command runs as a user runs
it, in a pseudo-terminal 80 columns wide (the width a report reads from the terminal itself: a folder of captures
once caught its command's output in a buffer, which is no terminal, and printed ops 219 columns wide)."""

from __future__ import annotations

import os
import pty
import re
import select
import struct
import sys
from pathlib import Path

import pytest
from rich.cells import cell_len

pytestmark = pytest.mark.slow

ROOT = Path(__file__).parents[2]
FILE = "sample_traces/a100-train-control.json.gz"
CAPTURES = "tests/data/noise/same"
RANKS = "sample_traces/hta-2rank"
DEMO = "demo:h100-bert-small"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
COLUMNS = 80

PER_TRACE = ("summary", "steps", "ops", "kernels", "code", "memory", "roofline", "explain", "critical", "breakdown")
OTHERS = {
    "ranks": ["ranks", RANKS, "--workers", "1"],
    "ranks demo": ["ranks", "demo:hta-2rank", "--workers", "1"],
    "diff captures": ["diff", CAPTURES],
    "diff files": ["diff", FILE, "sample_traces/v100-cudagraph-test.json.gz"],
    "diff snapshots": ["diff", "tests/data/snapshots/leak.pickle", "tests/data/snapshots/leak-more.pickle"],
    "memory snapshot": ["memory", "tests/data/snapshots/leak.pickle"],
    "ops sorted": ["ops", FILE, "--sort", "self_cpu"],
    "workloads": ["workloads"],
    "watch": ["watch", CAPTURES, "--once"],
    "sql": ["sql", FILE, "SELECT * FROM events LIMIT 5"],
    "sql captures": ["sql", CAPTURES, "SELECT * FROM ops"],
    "sql schema": ["sql", "--schema"],
}


def in_terminal(argv: list[str], tmp: Path) -> tuple[int, str]:
    """tracetui argv in an 80x24 pseudo-terminal: its exit status and what it printed (escapes left out)."""
    import fcntl
    import termios

    pid, fd = pty.fork()
    if pid == 0:  # the child: the command, as a user types it
        os.chdir(ROOT)
        env = {k: v for k, v in os.environ.items() if k != "TRACETUI_COLUMNS"}
        env.update(TRACETUI_CACHE_DIR=str(tmp / "cache"), COLUMNS=str(COLUMNS), LINES="24")
        os.execve(sys.executable, [sys.executable, "-m", "tui", *argv], env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, COLUMNS, 0, 0))
    out = b""
    while select.select([fd], [], [], 300)[0]:
        try:
            data = os.read(fd, 1 << 16)
        except OSError:  # the child has ended
            break
        if not data:
            break
        out += data
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), ANSI.sub("", out.decode("utf-8", "replace")).replace("\r", "")


def widest(text: str) -> list[str]:
    return [line for line in text.split("\n") if cell_len(line) > COLUMNS]


@pytest.fixture(scope="module")
def tmp(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fit")


@pytest.mark.parametrize("command", PER_TRACE)
def test_each_report_fits_80_columns_on_a_file_captures_ranks_and_a_demo(command, tmp):
    for trace in (FILE, CAPTURES, RANKS, DEMO):
        code, out = in_terminal([command, trace], tmp)
        assert code in (0, 2), (command, trace, out[-500:])  # 2: what a trace lacks (code without Python frames)
        assert not widest(out), (command, trace, widest(out)[:2])


@pytest.mark.parametrize("name", OTHERS)
def test_the_other_commands_fit_80_columns(name, tmp):
    code, out = in_terminal(OTHERS[name], tmp)
    assert code == 0, (name, out[-500:])
    assert out.strip() and not widest(out), (name, widest(out)[:2])
