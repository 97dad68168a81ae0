"""A bad tracetui setting is said when any command starts, one line each, whether or not the command reads it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, SAMPLES

from tui.model import errors, settings
from tui.model.load import cachedir

BERT = str(SAMPLES / "h100-bert-small.json.gz")
BAD = {
    "TRACETUI_THREADS": "zero",
    "TRACETUI_DECODE": "fast",
    "TRACETUI_DECODE_PROCS": "-2",
    "TRACETUI_RESULT_DELAY": "abc",
    "TRACETUI_CACHE_MAX_GB": "lots",
    "TRACETUI_COLUMNS": "wide",
    "TRACETUI_SQL_TIMEOUT_S": "-1",
    "TRACETUI_SQL_MEMORY_GB": "-1",
}
CORES = os.cpu_count() or 1
SAID = [  # each: the variable, the value, what it must be, and what is used instead (the default, with its value)
    f"tracetui: TRACETUI_THREADS=zero is not a whole number of threads, 1 or more: the default, {min(CORES, 8)} (one"
    " per core, up to 8)",
    "tracetui: TRACETUI_DECODE=fast is not auto, msgspec or native: the default, auto",
    f"tracetui: TRACETUI_DECODE_PROCS=-2 is not a whole number of processes from 1 to {CORES} (this machine's cores):"
    " the default, one per core for a big trace, else 1",
    "tracetui: TRACETUI_RESULT_DELAY=abc is not a number of seconds, 0 or more: the default, 0 s",
    "tracetui: TRACETUI_CACHE_MAX_GB=lots is not a number of GB, 0 or more: the default, 20 GB",
    "tracetui: TRACETUI_COLUMNS=wide is not a whole number of columns, 0 or more (0: no limit): the default, the"
    " terminal's width",
    "tracetui: TRACETUI_SQL_TIMEOUT_S=-1 is not a number of seconds, 0 or more (0: none): the default, 30 s",
    "tracetui: TRACETUI_SQL_MEMORY_GB=-1 is not a number of GB above 0: the default, a quarter of the memory available",
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
        "TRACETUI_CACHE_MAX_GB": "0.5",
        "TRACETUI_COLUMNS": "0",
        "TRACETUI_SQL_TIMEOUT_S": "5",
        "TRACETUI_SQL_MEMORY_GB": "1",
    }
    assert _run(["summary", BERT], tmp_path, **good).stderr == ""


def test_every_setting_the_code_says_is_checked_at_start():
    """A setting read by settings.py's readers, or said with said_once, anywhere in tui is one the start checks."""
    said = re.compile(r'(?:_count|_number|_folder|_bad|said_once)\(\s*f?"(TRACETUI_\w+)')
    names = {name for path in (ROOT / "tui").rglob("*.py") for name in said.findall(path.read_text())}
    assert names and names <= set(settings.SETTINGS)


def test_settings_are_read_in_settings_py_alone():
    """A TRACETUI_* value read anywhere else took a bad one without a word (TRACETUI_COLUMNS=wide, the cache's
    TRACETUI_CACHE_MAX_GB=lots, a TRACETUI_CONFIG_DIR that is a file): each is read in settings.py, which says it."""
    read = re.compile(r'(?<!del )os\.environ(?:\.get\(|\[)\s*"(TRACETUI_\w+)"\s*[,)\]](?!\s*=[^=])')  # not set
    home = ROOT / "tui" / "model" / "settings.py"
    elsewhere = {
        name: path.name
        for path in (ROOT / "tui").rglob("*.py")
        if path != home
        for name in read.findall(path.read_text())
    }
    assert not elsewhere, elsewhere


BAD_MEANS = [  # a bad value, and the reader that then gives the default (what the line says is used instead)
    ("TRACETUI_CACHE_MAX_GB", "nan", settings.cache_max_gb, 20.0),
    ("TRACETUI_CACHE_MAX_GB", "-3", settings.cache_max_gb, 20.0),
    ("TRACETUI_COLUMNS", "80x", settings.columns, None),
    ("TRACETUI_COLUMNS", "-1", settings.columns, None),
    ("TRACETUI_SQL_TIMEOUT_S", "inf", settings.sql_timeout_s, 30.0),
    ("TRACETUI_SQL_MEMORY_GB", "0", settings.sql_memory_gb, None),
]


@pytest.mark.parametrize(("name", "value", "read", "default"), BAD_MEANS)
def test_a_bad_value_is_said_once_and_means_the_default(name, value, read, default, monkeypatch):
    monkeypatch.setenv(name, value)
    errors.said_once.cache_clear()
    with pytest.warns(RuntimeWarning) as said:
        assert read() == default
        assert read() == default  # read again: said no more
    assert [str(w.message) for w in said] == [
        next(line for line in SAID if line.startswith(f"tracetui: {name}=")).replace(f"={BAD[name]} ", f"={value} ")
    ]


@pytest.mark.parametrize(
    ("name", "value", "read", "means"),
    [
        ("TRACETUI_CACHE_MAX_GB", "1.5", settings.cache_max_gb, 1.5),
        ("TRACETUI_CACHE_MAX_GB", "0", settings.cache_max_gb, 0.0),
        ("TRACETUI_COLUMNS", " 120 ", settings.columns, 120),
        ("TRACETUI_COLUMNS", "0", settings.columns, 0),
        ("TRACETUI_SQL_TIMEOUT_S", "2.5", settings.sql_timeout_s, 2.5),
        ("TRACETUI_SQL_TIMEOUT_S", "0", settings.sql_timeout_s, None),  # none, as `sql --timeout 0`
        ("TRACETUI_SQL_MEMORY_GB", "3", settings.sql_memory_gb, 3.0),
    ],
)
def test_a_good_value_is_read(name, value, read, means, monkeypatch, recwarn):
    monkeypatch.setenv(name, value)
    assert read() == means and not recwarn.list


def test_the_readers_take_the_default_a_bad_value_means(monkeypatch):
    """The code that reads each one: the SQL session's limits, and the width tables are fitted to."""
    from tui.reports.formats import terminal_width
    from tui.sql.session import memory_setting, timeout_setting

    monkeypatch.delenv("TRACETUI_SQL_MEMORY_GB", raising=False)
    unset = memory_setting()
    for name, value in (
        ("TRACETUI_SQL_TIMEOUT_S", "soon"),
        ("TRACETUI_SQL_MEMORY_GB", "much"),
        ("TRACETUI_COLUMNS", "x"),
    ):
        monkeypatch.setenv(name, value)
    with pytest.warns(RuntimeWarning):
        assert (timeout_setting(), terminal_width()) == (30.0, None)  # not a terminal here: any width
        assert abs(memory_setting() - unset) < 0.01 * unset  # a quarter of the memory available, read again


def test_ops_with_a_bad_width_is_the_table_at_the_terminals_width_and_one_line(tmp_path):
    """TRACETUI_COLUMNS=wide: said in one line, and the table as without it (no terminal: torch's layout)."""
    done, plain = _run(["ops", BERT], tmp_path, TRACETUI_COLUMNS="wide"), _run(["ops", BERT], tmp_path)
    assert done.returncode == plain.returncode == 0 and done.stdout == plain.stdout
    assert done.stderr.splitlines() == [SAID[5]]


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
    assert f"TRACETUI_RESULT_DELAY={value} is not a number of seconds, 0 or more: the default, 0 s" in done.stderr
    monkeypatch.setenv("TRACETUI_RESULT_DELAY", "0.25")
    assert settings.result_delay() == 0.25


@pytest.mark.parametrize("value", ["²", "2\x1b[31m", "\u202e4"])
def test_a_value_that_is_no_count_is_said_in_one_line_its_own_characters_escaped(value, tmp_path):
    """TRACETUI_THREADS=² passed str.isdigit and int() refused it: a traceback, where any other bad count was one
    line. A value's escape sequence or bidi control was written to the terminal as it was; it reads as an escape."""
    names = ("TRACETUI_THREADS", "TRACETUI_DECODE_PROCS", "TRACETUI_COLUMNS")
    done = _run(["--version"], tmp_path, **dict.fromkeys(names, value))
    shown = value.replace("\x1b", "\\x1b").replace("\u202e", "\\u202e")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    said = done.stderr.splitlines()
    assert [line.split("=")[0] for line in said] == [f"tracetui: {name}" for name in names]
    assert all(f"={shown} is not a whole number of " in line for line in said), said
    assert not any(c in done.stderr for c in "\x1b\u202e")


def _in_own_home(tmp_path) -> tuple[dict[str, str], Path]:
    """A home of the test's own (the default folders a bad value falls back to are made there, not in the user's),
    and a working folder holding a file (afile) and nothing else."""
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    (work / "afile").write_text("not a folder")
    env = {"HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache"), "XDG_CONFIG_HOME": str(home / ".config")}
    return env, work


FOLDERS = {"TRACETUI_CACHE_DIR": ".cache", "TRACETUI_CONFIG_DIR": ".config"}


@pytest.mark.parametrize("name", FOLDERS)
@pytest.mark.parametrize(
    ("value", "what"),
    [
        ("afile", "a folder's path ({work}/afile is a file)"),
        ("afile/below", "a folder's path ({work}/afile is a file)"),
        ("cache\r", "a folder's path without control characters"),
        ("/x/e\x1b[31mred", "a folder's path without control characters"),
    ],
)
def test_a_folder_that_cannot_be_one_is_said_in_one_line_and_the_default_is_used(name, value, what, tmp_path):
    """A cache folder that was a file said "the cache directory afile/tracetui cannot be written" on every load (a
    config folder that was a file, nothing: no keymap, the legend never shown), and one with a control character
    was made, a CR from a settings file written on Windows and all. Each is one line now, with the default used."""
    env, work = _in_own_home(tmp_path)
    done = _summary_in(work, {**env, name: value})
    default = Path(env["HOME"]) / FOLDERS[name] / "tracetui"
    shown = value.replace("\r", "\\x0d").replace("\x1b", "\\x1b")
    line = f"tracetui: {name}={shown} is not {what.format(work=work)}: the default, {default}"
    assert done.returncode == 0 and done.stderr.splitlines() == [line], done.stderr
    assert "Summary" in done.stdout and sorted(p.name for p in work.rglob("*")) == ["afile"]  # nothing made here
    if name == "TRACETUI_CACHE_DIR":
        assert cachedir.is_tagged(default) and any(cachedir.ENTRY.match(p.name) for p in default.iterdir())


def _summary_in(work: Path, env: dict) -> subprocess.CompletedProcess:
    """`tracetui summary` of BERT run from the folder work, with these settings added to the environment."""
    return subprocess.run(
        [sys.executable, "-m", "tui", "summary", BERT],
        capture_output=True,
        text=True,
        cwd=work,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
    )


@pytest.mark.parametrize("name", FOLDERS)
@pytest.mark.parametrize("value", ["", "  ", "rel/folder", "~/mine"])
def test_an_empty_relative_or_home_folder_works_in_silence(name, value, tmp_path):
    """Empty (or blank): the default, as an unset one. Relative: from the working folder (absolute in what is
    said of it). ~: the home, as a shell would have written it."""
    env, work = _in_own_home(tmp_path)
    done = _summary_in(work, {**env, name: value})
    assert done.returncode == 0 and done.stderr == "" and "Summary" in done.stdout
    if name == "TRACETUI_CACHE_DIR":
        home = Path(env["HOME"])
        at = {"rel/folder": work / "rel" / "folder", "~/mine": home / "mine"}.get(value, home / ".cache" / "tracetui")
        assert cachedir.is_tagged(at) and any(cachedir.ENTRY.match(p.name) for p in at.iterdir())


def test_the_viewers_keymap_is_read_from_the_default_folder_when_the_one_asked_for_is_a_file(tmp_path, monkeypatch):
    """keymap.toml was looked for in afile/keymap.toml, in silence: the user's keymap was not read."""
    from tui.app.keymap import KEYMAP, config_dir, load_keymap

    env, work = _in_own_home(tmp_path)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("TRACETUI_CONFIG_DIR", str(work / "afile"))
    default = Path(env["HOME"]) / ".config" / "tracetui"
    default.mkdir(parents=True)
    (default / KEYMAP).write_text('"timeline.zoom_in" = "i"\n')
    errors.said_once.cache_clear()
    with pytest.warns(RuntimeWarning, match=r"TRACETUI_CONFIG_DIR=.*afile is not a folder's path") as said:
        assert config_dir() == default
        assert load_keymap({"timeline.zoom_in"}) == ({"timeline.zoom_in": "i"}, None)
    assert len(said) == 1
