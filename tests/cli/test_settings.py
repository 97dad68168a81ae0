"""A bad tracetui setting is said when any command starts, one line each, whether or not the command reads it."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from conftest import ROOT, SAMPLES

from tui.model import settings

BERT = str(SAMPLES / "h100-bert-small.json.gz")
BAD = {
    "TRACETUI_THREADS": "zero",
    "TRACETUI_DECODE": "fast",
    "TRACETUI_DECODE_PROCS": "-2",
    "TRACETUI_RESULT_DELAY": "abc",
}
SAID = [
    "tracetui: TRACETUI_THREADS=zero is not a positive whole number: ignored",
    "tracetui: TRACETUI_DECODE=fast is neither msgspec nor native: msgspec reads",
    "tracetui: TRACETUI_DECODE_PROCS=-2 is not a positive whole number: ignored",
    "tracetui: TRACETUI_RESULT_DELAY=abc is not a number of seconds: ignored",
]


def _run(argv: list[str], cache, **env: str) -> subprocess.CompletedProcess:
    given = {k: v for k, v in os.environ.items() if k not in BAD} | {"TRACETUI_CACHE_DIR": str(cache)} | env
    return subprocess.run([sys.executable, "-m", "tui", *argv], capture_output=True, text=True, env=given, cwd=ROOT)


def test_a_cached_summary_says_each_bad_setting_in_one_line(tmp_path):
    """The first summary reads every setting as it decodes; the cached one reads none, and said nothing of them."""
    first = _run(["summary", BERT], tmp_path, **BAD)
    cached = _run(["summary", BERT], tmp_path, **BAD)
    for done in (first, cached):
        assert done.returncode == 0 and done.stderr.splitlines() == SAID  # once each: no second line from a reader
    assert cached.stdout == first.stdout == _run(["summary", BERT], tmp_path).stdout


@pytest.mark.parametrize("argv", [["--version"], ["summary", "/nonexistent/trace.json"]])
def test_any_command_says_them_and_exits_as_it_would(argv, tmp_path):
    done, plain = _run(argv, tmp_path, **BAD), _run(argv, tmp_path)
    assert done.returncode == plain.returncode and done.stdout == plain.stdout
    assert done.stderr.splitlines() == SAID + plain.stderr.splitlines() and "Traceback" not in done.stderr


def test_good_settings_are_said_nothing_of(tmp_path):
    good = {
        "TRACETUI_THREADS": "2",
        "TRACETUI_DECODE": "Native",
        "TRACETUI_DECODE_PROCS": "1",
        "TRACETUI_RESULT_DELAY": "0",
    }
    assert _run(["summary", BERT], tmp_path, **good).stderr == ""


def test_every_setting_the_code_says_is_checked_at_start():
    """A setting read with count_setting, or said with said_once, anywhere in tui is one the start checks."""
    said = re.compile(r'(?:count_setting\(|said_once\(f?)\s*"(TRACETUI_\w+)')
    names = {name for path in (ROOT / "tui").rglob("*.py") for name in said.findall(path.read_text())}
    assert names and names <= set(settings.SETTINGS)


@pytest.mark.parametrize("value", ["abc", "-1", "nan", "inf"])
def test_a_bad_result_delay_is_no_delay_and_the_viewer_still_imports(value, monkeypatch):
    """TRACETUI_RESULT_DELAY (the viewer's test hook, appkit/pace.py) read "abc" with float() when the viewer was
    imported: a ValueError and no viewer. A bad value is now said and means no delay."""
    monkeypatch.setenv("TRACETUI_RESULT_DELAY", value)
    done = subprocess.run(
        [sys.executable, "-c", "import tui.appkit.pace as p; print(p.delay())"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0 and done.stdout == "0.0\n", done.stderr
    assert f"TRACETUI_RESULT_DELAY={value} is not a number of seconds: ignored" in done.stderr
    monkeypatch.setenv("TRACETUI_RESULT_DELAY", "0.25")
    assert settings.result_delay() == 0.25
