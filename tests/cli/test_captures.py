"""Folders of captures (not jobs), `diff DIR`, `watch DIR`, and the command line's manners (--version, --limit, --help).

tests/data/tb-repeat2 holds what torch's tensorboard_trace_handler wrote for one worker with
schedule(wait=1, warmup=1, active=2, repeat=2): two files, ProfilerStep#2-3 then #6-7.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import time
from importlib import metadata
from pathlib import Path

import pytest
from conftest import SAMPLES

from tui.cli import build_parser, main
from tui.cli.help import EPILOGS
from tui.model.load.folder import folder_kind, list_captures
from tui.model.watch import Watcher, is_complete, summarize

TB = Path(__file__).parents[1] / "data" / "tb-repeat2"
OLDER, NEWER = sorted(TB.iterdir())  # the handler's ns time stamps sort as they were written


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def _steps(path: Path) -> set[str]:
    return {e["name"] for e in json.loads(path.read_text())["traceEvents"] if e["name"].startswith("ProfilerStep#")}


def test_one_workers_handler_files_are_captures_newest_first():
    kind = folder_kind(TB)
    assert kind.kind == "captures" and kind.files == [NEWER, OLDER]
    assert _steps(NEWER) == {"ProfilerStep#6", "ProfilerStep#7"}
    assert folder_kind(SAMPLES / "hta-2rank").kind == "job"  # rank-named files stay a job
    assert list_captures(SAMPLES / "hta-2rank") == [] and list_captures(NEWER) == []


def _two_workers(folder: Path, gap_ns: int) -> Path:
    folder.mkdir()
    stamp = int(OLDER.name.split(".")[1])
    shutil.copy(OLDER, folder / f"host_1.{stamp}.pt.trace.json")
    shutil.copy(OLDER, folder / f"host_2.{stamp + gap_ns}.pt.trace.json")
    return folder


def test_several_workers_side_by_side_are_a_job_one_after_another_are_captures(tmp_path):
    assert folder_kind(_two_workers(tmp_path / "job", 3 * 10**6)).kind == "job"  # written 3 ms apart, same steps
    later = folder_kind(_two_workers(tmp_path / "rerun", 120 * 10**9))  # the script run again two minutes later
    assert later.kind == "captures" and later.newest.name.startswith("host_2.")


def test_a_folder_without_rank_identity_is_captures_by_mtime(tmp_path):
    for k, name in enumerate(("mlp_fwd.json.gz", "linear_fwd.json.gz", "attn_naive.json.gz")):
        shutil.copy(SAMPLES / "cpu" / name, tmp_path / name)
        os.utime(tmp_path / name, (1_700_000_000 + k, 1_700_000_000 + k))
    (tmp_path / ".half.json.tmp.json").write_text("{")  # a capture being written by tracetui profile
    assert [f.name for f in list_captures(tmp_path)] == ["attn_naive.json.gz", "linear_fwd.json.gz", "mlp_fwd.json.gz"]


def test_summary_on_a_folder_of_captures_reports_the_newest_and_lists_the_others(capsys):
    code, out, err = run_cli(capsys, "summary", str(TB), "--format", "json", "--no-cache")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["capture"] == str(NEWER) and doc["other_captures"] == [str(OLDER)]
    assert [s["name"] for s in doc["steps"]] == ["ProfilerStep#6", "ProfilerStep#7"]
    assert "job" not in doc
    code, out, err = run_cli(capsys, "summary", str(TB), "--no-cache")
    first = out.splitlines()[0]
    assert first.startswith("Capture: ") and NEWER.name in first and f"the others, newest first: {OLDER.name}" in first
    assert "ProfilerStep#6" in out and "ProfilerStep#2" not in out and "rank" not in out


@pytest.mark.parametrize("command", ["ops", "kernels", "explain"])
def test_the_other_commands_on_a_folder_of_captures(capsys, command):
    code, out, err = run_cli(capsys, command, str(TB), "--format", "json", "--no-cache")
    assert code == 0, err
    assert json.loads(out)["capture"] == str(NEWER)
    alone = run_cli(capsys, command, str(NEWER), "--format", "json", "--no-cache")[1]
    assert {k: v for k, v in json.loads(out).items() if k not in ("capture", "other_captures")} == json.loads(alone)


def test_code_and_memory_on_a_folder_say_what_the_newest_capture_lacks(capsys):
    for command in ("code", "memory"):
        code, out, err = run_cli(capsys, command, str(TB), "--no-cache")
        assert code == 2 and err.count("\n") == 1 and NEWER.name in err, err


def test_diff_dir_compares_the_newest_two(capsys):
    code, out, err = run_cli(capsys, "diff", str(TB), "--format", "json", "--no-cache")
    assert code == 0, err
    doc = json.loads(out)
    assert (doc["a"], doc["b"]) == (str(OLDER), str(NEWER))
    code, out, err = run_cli(capsys, "diff", str(NEWER))
    assert code == 2 and "diff takes two traces, or a folder of two captures or more" in err


def test_ranks_on_a_folder_of_captures_is_a_usage_error(capsys):
    code, out, err = run_cli(capsys, "ranks", str(TB))
    assert code == 2 and err.count("\n") == 1 and "a folder of 2 captures, not a job of ranks" in err


def test_version_negative_limit_and_help(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert (
        exit_.value.code == 0 and capsys.readouterr().out.splitlines()[0] == f"tracetui {metadata.version('tracetui')}"
    )
    for argv in (["ops", str(NEWER), "--limit", "-1"], ["diff", str(OLDER), str(NEWER), "--limit", "-3"]):
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        err = capsys.readouterr().err
        assert exit_.value.code == 2 and err.count("\n") == 1 and "must be 0 (all) or more" in err
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    for name in [*EPILOGS, "profile", "watch"]:
        text = sub.choices[name].format_help()  # type: ignore[attr-defined]
        assert all(part in text for part in ("prints:", "defaults:", "example: tracetui")), name


def test_watch_once_prints_one_line_per_capture(capsys):
    code, out, err = run_cli(capsys, "watch", str(TB), "--once", "--format", "json", "--no-cache")
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert [d["capture"] for d in lines] == [OLDER.name, NEWER.name]
    assert [d["steps"] for d in lines] == [2, 2] and all(d["verdict"] and d["step_us"] > 0 for d in lines)


def test_watch_skips_half_written_and_corrupt_files_and_goes_on(tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    shutil.copy(OLDER, folder / OLDER.name)
    watcher = Watcher(folder, clock=lambda: time.time() + 5)  # every file settled by its age, none stalled
    assert watcher.poll() == ([folder / OLDER.name], [])
    whole = NEWER.read_bytes()
    half = folder / NEWER.name
    half.write_bytes(whole[: len(whole) // 2])
    bad = folder / "host_1.1796285603399999999.pt.trace.json.gz"
    bad.write_bytes(gzip.compress(b'{"traceEvents": 12}'))
    ready, notes = watcher.poll()
    assert ready == [bad] and notes == [f"{NEWER.name} is still being written; skipped for now"]
    with pytest.raises(Exception, match="traceEvents"):
        summarize(bad, use_cache=False)
    watcher.mark_bad(bad)
    assert watcher.poll() == ([], [])  # told once; the bad one not offered again
    half.write_bytes(whole)
    assert watcher.poll() == ([], [])  # seen being written: whole once its size holds over two polls
    assert watcher.poll() == ([half], [])
    assert summarize(half, use_cache=False).steps == 2


def test_a_file_that_stopped_growing_and_is_not_whole_is_corrupt_said_once(tmp_path):
    """Cut and left for longer than STALLED_S (random bytes, a half-written file whose writer died): corrupt, said
    once, not offered again until it changes; --help says how long."""
    from tui.model.watch import STALLED_S

    folder = tmp_path / "run"
    folder.mkdir()
    cut, junk = folder / NEWER.name, folder / "a.json"
    whole = NEWER.read_bytes()
    cut.write_bytes(whole[: len(whole) // 2])
    junk.write_bytes(bytes(range(256)) * 8)
    now = [time.time() + 5]
    watcher = Watcher(folder, clock=lambda: now[0])
    ready, notes = watcher.poll()
    assert ready == [] and all("still being written" in n for n in notes) and len(notes) == 2
    now[0] += STALLED_S
    ready, notes = watcher.poll()
    assert (
        ready == []
        and len(notes) == 2
        and all(" is corrupt: not a whole trace, and unchanged for " in n for n in notes)
    )
    assert watcher.poll() == ([], [])  # said once
    cut.write_bytes(whole)  # it changed: looked at again
    assert watcher.poll()[0] == [cut]
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert f"unchanged for {STALLED_S:.0f} s" in " ".join(sub.choices["watch"].format_help().split())


def test_complete_means_a_whole_document(tmp_path):
    plain, packed = tmp_path / "a.json", tmp_path / "b.json.gz"
    text = NEWER.read_bytes()
    plain.write_bytes(text[:-10])
    packed.write_bytes(gzip.compress(text)[:-20])
    assert not is_complete(plain) and not is_complete(packed)
    plain.write_bytes(text + b"\n")
    packed.write_bytes(gzip.compress(text))
    assert is_complete(plain) and is_complete(packed)


async def test_watch_viewer_shows_a_strip_switches_to_new_captures_and_diffs(tmp_path):
    from textual.widgets import DataTable, Static

    from tui.app import TraceApp
    from tui.screens.watch import WatchScreen

    folder = tmp_path / "run"
    folder.mkdir()
    shutil.copy(OLDER, folder / OLDER.name)
    app = TraceApp([], use_cache=False, watch=folder, interval=0.2)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, WatchScreen)
        strip = screen.query_one(DataTable)
        for _ in range(100):
            await pilot.pause(0.05)
            if strip.row_count == 1:
                break
        shutil.copy(NEWER, folder / NEWER.name)
        os.utime(folder / NEWER.name, (1_000_000_000, 1_000_000_000))  # settled at once
        for _ in range(100):
            await pilot.pause(0.05)
            if strip.row_count == 2:
                break
        assert strip.row_count == 2 and strip.cursor_row == 1
        assert [str(c) for c in strip.get_row_at(1)][:2] == [NEWER.name, "2"]
        await pilot.press("d")
        body = screen.query_one("#watch-shown", Static)
        for _ in range(100):
            await pilot.pause(0.05)
            if "Typical step" in str(body.render()):
                break
        assert f"A: {OLDER.name}" in str(body.render()) and f"B: {NEWER.name}" in str(body.render())


def test_watch_on_an_empty_folder_says_there_is_nothing(tmp_path, capsys):
    code, out, err = run_cli(capsys, "watch", str(tmp_path), "--once", "--format", "json")
    assert code == 0 and out == "" and err.count("\n") == 1
    assert f"{tmp_path}: no captures in it" in err and "nothing to report" in err


async def test_the_watch_strip_on_an_empty_folder_says_it_is_waiting(tmp_path):
    from textual.widgets import Static

    from tui.app import TraceApp

    app = TraceApp([], use_cache=False, watch=tmp_path, interval=0.1)
    async with app.run_test(size=(100, 30)) as pilot:
        title = app.screen.query_one("#watch-title", Static)
        for _ in range(100):
            await pilot.pause(0.05)
            if "waiting" in str(title.render()):
                break
        assert "no captures yet; waiting for the first" in str(title.render())
        await pilot.press("o")  # nothing to open: said, not an exit
        assert app.is_running


def test_a_stray_file_among_captures_is_not_taken_for_the_newest(tmp_path, capsys):
    import os
    import shutil
    import zlib

    shutil.copy(SAMPLES / "h100-bert-small.json.gz", tmp_path / "run.json.gz")
    stray = tmp_path / "notes.json.gz"
    stray.write_bytes(zlib.compress(b"not a trace", wbits=31))
    os.utime(tmp_path / "run.json.gz", (1, 1))  # the stray file is the newest
    assert main(["summary", str(tmp_path), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["capture"].endswith("run.json.gz")


def test_profiles_folder_of_workload_folders_points_at_them(tmp_path, capsys):
    """tracetui profile writes traces/WORKLOAD/...: given traces/, every command names the folders that hold the
    captures (diff said 'traces is a job of ranks'; watch said there were none)."""
    for workload, names in (("matmul_add", [OLDER, NEWER]), ("mlp", [OLDER])):
        (tmp_path / "traces" / workload).mkdir(parents=True)
        for f in names:
            shutil.copy(f, tmp_path / "traces" / workload / f.name)
    folder = str(tmp_path / "traces")
    where = f"its folders do: {folder}/matmul_add (2), {folder}/mlp (1)"
    for args in (["summary", folder], ["diff", folder]):
        code, out, err = run_cli(capsys, *args)
        assert code == 2 and not out and err.count("\n") == 1, args
        assert "job of ranks" not in err and where in err and "give one of them" in err
    code, out, err = run_cli(capsys, "watch", folder, "--once")
    assert code == 0 and f"no captures in it (no .json or .json.gz trace; {where}); nothing to report" in err
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = run_cli(capsys, "summary", str(empty))
    assert code == 2 and err.strip().endswith("folder holds no .json or .json.gz traces")
