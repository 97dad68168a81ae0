"""Bad input is said before the screen: `open` checks a file's first bytes before the full screen starts, a folder
names the files it skipped and why, and what the loader says of the same file is what the check says."""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT, SAMPLES

from tui.cli import main
from tui.model.errors import TraceError
from tui.model.load import load_trace
from tui.model.load.folder import first_problem

MOE = SAMPLES / "b300-moe-small.json.gz"
SCRIPT = shutil.which("script")


def bad_files(tmp_path) -> dict[str, bytes]:
    return {
        "empty.json": b"",
        "spaces.json": b"  \n\t ",
        "random.json": bytes(range(7, 250)) * 4,
        "notes.json": b"these are my notes, not a trace\n",
        "broken.json.gz": b"\x1f\x8b\x08\x00garbage that is no deflate stream",
        "empty.json.gz": gzip.compress(b""),
        "random.json.gz": bytes(range(7, 250)) * 4,  # named gzip, and not: says so, not "a Perfetto trace"
        "cut.json": gzip.decompress((SAMPLES / "h100-bert-small.json.gz").read_bytes())[:3000],  # before its events
    }


def write(tmp_path, name: str, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("name", list(bad_files(None)))
def test_open_says_what_is_wrong_before_the_screen_starts(tmp_path, capsys, monkeypatch, name):
    path = write(tmp_path, name, bad_files(tmp_path)[name])
    import tui.app

    def no_screen(*_args, **_kwargs):
        raise AssertionError("the full screen started for a file its first bytes rule out")

    monkeypatch.setattr(tui.app.TraceApp, "run", no_screen)
    assert main(["open", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"tracetui: error: {path}: ") and err.count("\n") == 1
    with pytest.raises(TraceError) as loader:  # the loader, on the same file, names the same problem
        load_trace(path, use_cache=False)
    said = err.removeprefix(f"tracetui: error: {path}: ").strip()
    assert (
        said.split(" (")[0] == loader.value.problem.split(" (")[0] or "gzip" in said and "gzip" in loader.value.problem
    )


def test_a_trace_that_starts_cut_inside_its_events_is_not_refused_before_it_is_salvaged(tmp_path):
    text = gzip.decompress(MOE.read_bytes())
    events = text.index(b'"traceEvents"')
    cut = write(tmp_path, "cut.json", text[text.index(b'"ph"', events + 2000) - 30 :])  # the head lost, events remain
    assert first_problem(cut) is None and first_problem(MOE) is None
    assert load_trace(cut, use_cache=False).n > 0  # the loader salvages it, as the check let it


def opened_in_a_terminal(tmp_path, path) -> tuple[int, str]:
    """`tracetui open PATH` run in a terminal (util-linux's script): its exit code and all it wrote."""
    assert SCRIPT is not None  # the callers skip without it
    env = {**os.environ, "TRACETUI_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run(
        [SCRIPT, "-qec", f"{sys.executable} -m tui.cli open {path}", "/dev/null"],
        capture_output=True,
        cwd=ROOT,
        env=env,
        timeout=120,
        check=False,
    )
    return done.returncode, done.stdout.decode()


@pytest.mark.skipif(SCRIPT is None, reason="needs util-linux's script for a terminal")
def test_in_a_terminal_no_full_screen_flickers_before_the_error(tmp_path):
    empty = write(tmp_path, "empty.json", b"")
    code, out = opened_in_a_terminal(tmp_path, empty)
    assert code == 2 and "\x1b[?1049h" not in out  # the alternate screen never opened
    said = f"tracetui: error: {empty}: empty trace (no JSON in the file)"
    assert "".join(out.split()) == "".join(said.split())  # wrapped to the terminal, maybe inside the path


@pytest.mark.skipif(SCRIPT is None, reason="needs util-linux's script for a terminal")
@pytest.mark.parametrize("text", [b'{"traceEvents": [', b'{"traceEvents": [{"ph": "M", "name": "process_name", "pi'])
def test_in_a_terminal_a_cut_file_with_no_events_is_one_line_before_any_screen(tmp_path, text):
    """GIVEN a file cut before its first event (only a whole read finds there is none) WHEN opened in a terminal
    THEN one line, exit 2, and the alternate screen never opened."""
    cut = write(tmp_path, "cut.json", text)
    code, out = opened_in_a_terminal(tmp_path, cut)
    assert code == 2 and "\x1b[?1049h" not in out, out
    assert "".join(out.split()).startswith("".join(f"tracetui: error: {cut}:".split()))
    assert cut.read_bytes() == text


def test_a_folder_names_the_files_it_skipped_and_why(tmp_path, capsys):
    folder = tmp_path / "captures"
    folder.mkdir()
    shutil.copy(MOE, folder / "good.json.gz")
    write(folder, "a.json", bytes(range(7, 250)) * 4)
    write(folder, "b.json", b"")
    # listed newest first: a.json the newer (written one after the other, the two could fall in one clock tick, or not)
    os.utime(folder / "b.json", ns=(10**18, 10**18))
    os.utime(folder / "a.json", ns=(10**18 + 10**9, 10**18 + 10**9))
    assert main(["summary", str(folder)]) == 0
    out = capsys.readouterr().out
    head = " ".join(out.split("\n\n")[0].split())
    assert "is a folder of 1 capture; this is the newest, good.json.gz" in head
    assert "skipped 2 files that are no trace: a.json (not a JSON trace), b.json (empty trace)" in head


def test_json_documents_of_no_events_are_no_captures(tmp_path, capsys, monkeypatch):
    """`[]` and an object without traceEvents start as JSON does, but hold no trace: they are skipped and named, never
    taken for the newest capture (before: "a folder of 2 captures", then an error on the newest)."""
    folder = tmp_path / "docs"
    folder.mkdir()
    write(folder, "emptyarr.json", b"[]")
    write(folder, "other.json", b'{"a": 1}')
    import tui.app

    monkeypatch.setattr(tui.app.TraceApp, "run", lambda *_a, **_k: pytest.fail("the screen started"))
    assert main(["open", str(folder)]) == 2
    said = ("emptyarr.json (no trace events in the file)", "other.json (no 'traceEvents' array in the JSON object)")
    err = capsys.readouterr().err
    assert err.startswith(f"tracetui: error: {folder}: no file of this folder is a trace: ") and err.count("\n") == 1
    assert all(s in err for s in said)
    shutil.copy(MOE, folder / "good.json.gz")
    assert main(["summary", str(folder)]) == 0
    head = " ".join(capsys.readouterr().out.split("\n\n")[0].split())
    assert "is a folder of 1 capture; this is the newest, good.json.gz; skipped 2 files that are no trace" in head
    assert all(s in head for s in said)


def test_a_folder_of_junk_is_one_line_before_the_screen(tmp_path, capsys, monkeypatch):
    folder = tmp_path / "junk"
    folder.mkdir()
    write(folder, "a.json", bytes(range(7, 250)) * 4)
    import tui.app

    monkeypatch.setattr(tui.app.TraceApp, "run", lambda *_a, **_k: pytest.fail("the screen started"))
    for command in (["open", str(folder)], ["summary", str(folder)]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert err == f"tracetui: error: {folder}: no file of this folder is a trace: a.json (not a JSON trace)\n"
    (folder / "a.json").unlink()
    assert main(["open", str(folder)]) == 2
    assert "folder holds no .json or .json.gz traces" in capsys.readouterr().err
