"""The cache's folder, and what in it is tracetui's: the only things its clean-up may ever remove.

The folder asked for (TRACETUI_CACHE_DIR, else the platform's user cache folder for tracetui) is used as it is
when tracetui made it or may take it (missing, empty, or the platform's folder named for tracetui); any other
folder (a home, ~/.cache, /etc through a link) is used through a subfolder of its own, tracetui/, made by
tracetui. Either way the folder carries a cache directory tag (CACHEDIR.TAG, https://bford.info/cachedir/:
backup tools skip it), and so does every entry and temporary folder tracetui makes in it, from the moment it is
made. Clean-up, the size budget and the removal of leftovers remove, in the cache folder itself, only tagged
folders of tracetui's names (a 32-digit hash, strict temporary names; an untagged one only when it is empty, a
temporary folder made by a run killed before it was tagged); the files beside the entries (their lock files,
their unzipped sources) live in tagged folders of their own (LOCKS, UNZIPPED). A file or folder of anyone
else's in the cache folder is never counted and never removed, whatever its name: not when the folder was
taken empty and the user put files in it later either.

A load that keeps out of the cache (use_cache=False, --no-cache) runs in kept_out(): ensure_root, the one door to
making anything here, says no to it, so not even the folder is made; the load's scratch goes to a private temporary
folder (spill.py) and no compile of the native decoder starts behind it (native_warm.py).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from ..settings import cache_dir, cache_max_gb, user_folder

SIGNATURE = "Signature: 8a477f597d28d172789f06886806bc55"  # the cache directory tag's, as its spec fixes it
TAG = "CACHEDIR.TAG"
TAG_TEXT = (
    f"{SIGNATURE}\n# This file is a cache directory tag created by tracetui.\n"
    "# tracetui removes only the folders and files it made here.\n"
)
_TAG_TEMP = ".tracetui-tag-"  # a tag being written
SUBFOLDER = "tracetui"  # where a folder that is not tracetui's is used
KEEP_ENTRIES = 1024  # the most recently written traces kept (a job of many ranks is one entry per rank)
LEFTOVER_AGE_S = 24 * 3600  # what a killed run left is removed once this old (a live writer's is younger)
GONE_WRITER_S = 300.0  # or once this old when its writer's process is gone from this machine (see writer_gone)

_HASH = r"(?:snap-)?[0-9a-f]{32}"
ENTRY = re.compile(rf"{_HASH}\Z")
_RAND = r"[a-z0-9_]{8}"  # tempfile's random part
TEMP_DIR = re.compile(rf"\.(?:tmp-(?:\d+\.\d+\.|old-|snap-)|parts-(?:\d+\.\d+\.)?){_RAND}\Z")  # own_tempdir's names
LOCKS = ".tracetui-locks"  # the entries' lock files (see flight.py), each named after its entry
UNZIPPED = ".tracetui-unzipped"  # the entries' unzipped sources (a .json.gz's bytes), each named after its entry


def cache_home() -> Path:
    """The folder asked for: TRACETUI_CACHE_DIR (settings.py says a value that cannot be a folder), else the user's
    cache folder for tracetui."""
    return cache_dir() or user_folder("cache")


def cache_root() -> Path:
    """Where the cache is: the folder asked for when it is (or may become) tracetui's, else its subfolder."""
    home = cache_home()
    if is_tagged(home):
        return home
    sub = home / SUBFOLDER
    if is_tagged(sub):  # (before looking through a folder of someone else's files, each time)
        return sub
    return home if _may_take(home) else sub


def _may_take(folder: Path) -> bool:
    """Is the folder tracetui's (tagged), or may it become so: missing, empty, or the platform's one for it?"""
    if is_tagged(folder):
        return True
    try:
        if folder.is_symlink():
            return False  # a link (to a folder elsewhere, or to nothing): its target is someone else's
        if not folder.exists():  # (asked before is_dir: another opener may make it between the two looks)
            return True
        if not folder.is_dir():
            return False
        return _empty(folder) or folder == user_folder("cache") or is_tagged(folder)  # (see _empty)
    except OSError:
        return False


def _empty(folder: Path) -> bool:
    """Does the folder hold nothing (but the tag another process is writing in it now)? A thread or process
    opening a trace beside this one may put its tag in place between this look and the take: whoever takes a
    folder on this look asks is_tagged again when it says no."""
    return all(p.name.startswith(_TAG_TEMP) for p in folder.iterdir())


_KEPT_OUT: ContextVar[bool] = ContextVar("tracetui_kept_out", default=False)


@contextmanager
def kept_out() -> Iterator[None]:
    """Make nothing in the cache folder while the block runs (in this thread: a context variable, so a load beside
    it that uses the cache is not kept out): ensure_root says no."""
    token = _KEPT_OUT.set(True)
    try:
        yield
    finally:
        _KEPT_OUT.reset(token)


def ensure_root() -> bool:
    """Create the cache folder and its folders of locks and unzipped sources, tagged; False when it cannot be
    written, is not tracetui's to use (a folder already there by the name of the subfolder, holding someone
    else's files), or what runs here keeps out of it (kept_out: nothing is made then)."""
    if _KEPT_OUT.get():
        return False
    root = cache_root()
    try:
        for folder in (root, root / LOCKS, root / UNZIPPED):
            folder.mkdir(parents=True, exist_ok=True)
            if not _take(folder, root):
                return False
    except OSError:
        return False
    return os.access(root, os.W_OK)


def _take(folder: Path, root: Path) -> bool:
    """Tag a folder of the cache as tracetui's when it may be taken; True when it is tracetui's now (another
    thread or process may have tagged it since the caller looked: see _empty)."""
    if is_tagged(folder):
        return True
    if not (_may_take(root) if folder == root else _empty(folder) or is_tagged(folder)):
        return False
    tag(folder)
    return True


def lock_file(entry: Path) -> Path:
    """The lock file of an entry (its writer's, see flight.one_writer)."""
    return entry.parent / LOCKS / f"{entry.name}.lock"


def unzipped_file(entry: Path) -> Path:
    """Where a compressed trace's entry keeps its unzipped bytes."""
    return entry.parent / UNZIPPED / f"{entry.name}.json"


def is_tagged(folder: Path) -> bool:
    """Does the folder carry tracetui's cache directory tag (a folder that is not a link)?"""
    try:
        if folder.is_symlink():
            return False
        with open(folder / TAG, encoding="ascii", errors="replace") as f:
            head = f.read(len(TAG_TEXT) + 1)
    except OSError:
        return False
    return head.startswith(SIGNATURE) and "tracetui" in head


def tag(folder: Path) -> None:
    """Mark a folder as tracetui's (written whole, then renamed: a tag is never half there)."""
    fd, tmp = tempfile.mkstemp(prefix=_TAG_TEMP, dir=folder)
    try:
        os.fchmod(fd, 0o644)  # (mkstemp's is the owner's only: a tag is for anyone to read)
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(TAG_TEXT)
        os.replace(tmp, folder / TAG)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def own_tempdir(prefix: str, parent: Path) -> Path:
    """A new folder of tracetui's in the cache folder (prefix one of TEMP_DIR's), tagged at once: renamed into
    place, it is an entry that carries its tag."""
    tmp = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    try:
        tag(tmp)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return tmp


FORMAT_VERSION = 17  # bump when the columns' layout changes (a derived value's code is in its name: see code_id.py)


def entry_dir(path: Path) -> Path:
    """The cache entry for a file as it is now (its path, size, mtime and a hash of its head and tail)."""
    key = f"{file_key(path)}|{FORMAT_VERSION}"
    return cache_root() / hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:32]  # any file name


def has_entry(path: Path) -> bool:
    """Is there an entry for the file as it is now (a cheap check: nothing is read)?"""
    try:
        return (entry_dir(path) / "meta.json").is_file()
    except OSError:
        return False


HEAD_TAIL_BYTES = 64 << 10  # of a file's start and end, hashed into its key
_KEYS: dict[tuple, str] = {}  # a file's key by its stat (the hash is read once while the file stays as it is)
_KEYS_MAX = 4096


def file_key(path: Path) -> str:
    """What names a file's cache entry: its path, size, mtime, change time and a hash of its head and tail. Any
    write moves the change time, which no tool sets back (`touch -r` and `cp -p` set the mtime): an edit in the
    middle of a file with its mtime put back was served from the old entry when only the mtime was in the key.
    The hash still tells content replaced under the same stat (a copy from another file system). (The hash is kept
    by the file's full stat.)"""
    st = path.stat()
    stamp = (str(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    key = _KEYS.get(stamp)
    if key is None:
        key = f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}|{st.st_ctime_ns}|{_head_tail(path, st.st_size)}"
        if len(_KEYS) >= _KEYS_MAX:
            _KEYS.clear()
        _KEYS[stamp] = key
    return key


def _head_tail(path: Path, size: int) -> str:
    h = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as f:
        h.update(f.read(HEAD_TAIL_BYTES))
        if size > HEAD_TAIL_BYTES:
            f.seek(max(HEAD_TAIL_BYTES, size - HEAD_TAIL_BYTES))
            h.update(f.read(HEAD_TAIL_BYTES))
    return h.hexdigest()


def prune(root: Path, keep: int | None = None) -> None:
    """Remove the oldest entries (and their unzipped sources) beyond the `keep` (default KEEP_ENTRIES) newest,
    or beyond the disk budget (settings.cache_max_gb); only tracetui's own, in its own folder."""
    from .flight import remove_lock

    if not is_tagged(root):
        return
    keep = KEEP_ENTRIES if keep is None else keep
    budget = cache_max_gb() * 1e9
    drop_leftovers(root)
    entries = sorted(_entries(root), key=_mtime, reverse=True)
    used = 0
    for k, entry in enumerate(entries):
        used += _size(entry)
        if k >= keep or (k > 0 and used > budget):
            shutil.rmtree(entry, ignore_errors=True)
            unzipped_file(entry).unlink(missing_ok=True)
            remove_lock(lock_file(entry))


def _entries(root: Path) -> list[Path]:
    """tracetui's entries in its folder: a hash's name, a folder (not a link), tagged."""
    try:
        return [p for p in root.iterdir() if ENTRY.match(p.name) and p.is_dir() and is_tagged(p)]
    except OSError:
        return []


def _mtime(p: Path) -> float:
    try:
        return p.stat().st_mtime
    except OSError:
        return 0.0


def drop_leftovers(root: Path, older_s: float | None = None) -> None:
    """Remove what a killed run left behind, older than a day (LEFTOVER_AGE_S): half-written entries and decode
    parts (tagged temporary folders), unzipped sources whose entry was never written or half written, and the
    lock files of entries that are gone (one a writer holds stays). Only tracetui's own: see the module's note."""
    if not is_tagged(root):
        return
    old = time.time() - (LEFTOVER_AGE_S if older_s is None else older_s)
    for left in _listing(root):
        if TEMP_DIR.match(left.name) and (_older(left, old) or writer_gone(left)) and left.is_dir():
            if is_tagged(left):
                shutil.rmtree(left, ignore_errors=True)
            else:
                _quietly(left.rmdir)  # killed before its tag was written: only ever removed empty
    if is_tagged(root / UNZIPPED):
        for left in _listing(root / UNZIPPED):
            entry = root / left.name.split(".")[0]
            stale = _older(left, old) or writer_gone(left)
            if left.name != TAG and stale and not (ENTRY.match(entry.name) and entry.is_dir()):
                _quietly(left.unlink)  # (a half-unzipped file's name starts with a dot: no entry has its name)
    if is_tagged(root / LOCKS):
        from .flight import remove_lock

        for left in _listing(root / LOCKS):
            entry = root / left.name.removesuffix(".lock")
            if left.name != TAG and _older(left, old) and not (ENTRY.match(entry.name) and entry.is_dir()):
                remove_lock(left)


def writer_gone(left: Path) -> bool:
    """Is this a writer's temporary file or folder (its process in its name: flight.writer_tag) whose process has
    ended on this machine, untouched for GONE_WRITER_S? Ctrl-C or kill while the columns were written left a
    folder of up to the entry's size (226 MB from a 1 GB trace), kept a day. A cache shared by several machines
    names processes of others: the age keeps a live writer's there (its folder changes with each file it adds)."""
    from .flight import writer_of

    pid = writer_of(left.name)
    if pid is None or not _older(left, time.time() - GONE_WRITER_S):
        return False
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (OSError, OverflowError):  # another user's (alive), or no such number here
        return False
    return False


def drop_gone_writers(folder: Path) -> None:
    """Remove the temporary files in an entry's folder whose writers are gone (writer_gone)."""
    for left in _listing(folder):
        if left.name.endswith(".part") and writer_gone(left):
            _quietly(left.unlink)


def _listing(folder: Path) -> list[Path]:
    """What a folder holds, links left out."""
    try:
        return [p for p in folder.iterdir() if not p.is_symlink()]
    except OSError:
        return []


def _older(p: Path, than: float) -> bool:
    try:
        return p.lstat().st_mtime < than
    except OSError:
        return False


def _quietly(fn) -> None:
    try:
        fn()
    except OSError:
        pass


def _size(entry: Path) -> int:
    """Bytes an entry takes on disk, with its unzipped source."""
    try:
        files = [f for f in entry.rglob("*") if f.is_file()] + [unzipped_file(entry)]
        return sum(f.stat().st_size for f in files if f.exists())
    except OSError:
        return 0
