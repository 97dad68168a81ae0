"""What a writer killed mid-write leaves in the cache (a fresh-eyes run's Ctrl-C and kill during a first load): its
half-written entry folder (226 MB from a 1 GB trace) and the derived values' temporary files. They go at the next
write once their process is gone from this machine and they are GONE_WRITER_S old; a live writer's stay, and so
does any leftover of a process this machine cannot see ended (another user's, another machine's) until a day."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import SAMPLES

from tui.cli import main
from tui.model.load import cachedir
from tui.model.load.cache import EntryStore
from tui.model.load.cachedir import entry_dir

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process ids")


def _ended_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


def _aged(path: Path, seconds: float) -> Path:
    then = time.time() - seconds
    os.utime(path, (then, then))
    return path


@pytest.fixture
def live_pid():
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    yield proc.pid
    proc.kill()
    proc.wait()


def _half_entry(root: Path, pid: int) -> Path:
    """A writer's entry folder as a kill leaves it: tagged, a column half written."""
    folder = cachedir.own_tempdir(f".tmp-{pid}.140000.", root)
    (folder / "x.ts.npy").write_bytes(b"\x93NUMPY" + bytes(1000))
    return folder


def _summary(tmp_path: Path, name: str) -> None:
    trace = tmp_path / name
    shutil.copy(SAMPLES / name, trace)
    assert main(["summary", str(trace)]) == 0  # a first load: it writes an entry, then prunes


def test_a_killed_writers_half_entry_goes_at_the_next_write(tmp_path, isolated_cache, capsys, live_pid):
    gone_old = _aged(_half_entry(isolated_cache, _ended_pid()), cachedir.GONE_WRITER_S + 60)
    gone_new = _half_entry(isolated_cache, _ended_pid())  # just left: perhaps another machine's live writer
    live_old = _aged(_half_entry(isolated_cache, live_pid), cachedir.GONE_WRITER_S + 60)
    mine = _aged(_half_entry(isolated_cache, os.getpid()), cachedir.GONE_WRITER_S + 60)
    _summary(tmp_path, "h100-bert-small.json.gz")
    capsys.readouterr()
    assert not gone_old.exists()
    assert gone_new.is_dir() and live_old.is_dir() and mine.is_dir()


def test_a_killed_decodes_parts_go_at_the_next_write(tmp_path, isolated_cache, capsys, live_pid):
    """A decode killed while its workers spilled their parts left its `.parts-*` folder (one part per job, up to the
    trace's columns) for a day: it carried no process id. It now does, and goes as a half entry does."""

    def parts(pid: int) -> Path:
        folder = cachedir.own_tempdir(f".parts-{pid}.140000.", isolated_cache)
        (folder / "part-k3j_x9a1.bin").write_bytes(bytes(1000))
        return _aged(folder, cachedir.GONE_WRITER_S + 60)

    gone, live = parts(_ended_pid()), parts(live_pid)
    _summary(tmp_path, "h100-bert-small.json.gz")
    capsys.readouterr()
    assert not gone.exists() and live.is_dir()


def test_a_user_folder_named_as_a_writers_is_not_removed(tmp_path, isolated_cache, capsys):
    """Untagged, it is not tracetui's: an empty one goes (a writer killed before its tag), one with files stays."""
    users = isolated_cache / f".tmp-{_ended_pid()}.1.abcdefgh"
    (users / "notes.txt").parent.mkdir()
    (users / "notes.txt").write_text("mine")
    _aged(users, cachedir.GONE_WRITER_S + 60)
    _summary(tmp_path, "h100-bert-small.json.gz")
    capsys.readouterr()
    assert (users / "notes.txt").read_text() == "mine"


def test_a_killed_writers_derived_part_goes_when_the_entry_is_next_written(tmp_path, isolated_cache, capsys, live_pid):
    _summary(tmp_path, "h100-bert-small.json.gz")
    capsys.readouterr()
    derived = entry_dir(tmp_path / "h100-bert-small.json.gz") / "derived"
    gone = derived / f".ops@0123.json.{_ended_pid()}.140000.k3j_x9a1.part"
    gone.write_bytes(b"{half")
    _aged(gone, cachedir.GONE_WRITER_S + 60)
    live = derived / f".ops@0123.json.{live_pid}.140000.abcdefgh.part"
    live.write_bytes(b"{half")
    _aged(live, cachedir.GONE_WRITER_S + 60)
    EntryStore(derived.parent).put_blob("probe@0", b"value")
    assert not gone.exists() and live.exists()
    assert (derived / "probe@0.msgpack").read_bytes() == b"value"


def test_a_writers_names_say_its_process(tmp_path, isolated_cache):
    # the names the writers make (flight.py) and the names the sweep reads are one format: a change to one side
    # alone would leave every killed writer's files for a day
    from tui.model.load import flight, spill
    from tui.model.load.cachedir import own_tempdir

    fd, name = flight.private_file(tmp_path / "ops.npy")
    os.close(fd)
    folder = own_tempdir(f".tmp-{flight.writer_tag()}.", tmp_path)
    assert flight.writer_of(Path(name).name) == os.getpid()
    assert flight.writer_of(Path(folder).name) == os.getpid()
    parts = Path(spill.scratch_folder(cachedir.cache_root()))
    assert flight.writer_of(parts.name) == os.getpid() and cachedir.TEMP_DIR.match(parts.name)
    assert flight.writer_of("ops.npy") is None and flight.writer_of(".tmp-old-abc") is None
