"""A script using the API at its top level, without `if __name__ == "__main__":`, runs once: no worker process
is spawned to run it again (each did, and failed with a RuntimeError traceback); a guarded one decodes in workers."""

from __future__ import annotations

import gzip
import subprocess
import sys
import textwrap

from conftest import ROOT, SAMPLES

SETUP = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
import tui.model.load.parse as loader, tui.model.load.parts as parts, tui.model.load.source as source
parts.PARALLEL_MIN_BYTES, source.CHUNK_BYTES = 0, 64 << 10  # a small trace decoded in workers, as a big one is
decode = loader.decode_parallel
def counted(*args, **kwargs):
    out = decode(*args, **kwargs)
    print("decoded in workers", flush=True)
    return out
loader.decode_parallel = counted
import tracetui
print("top level", flush=True)
"""
LOAD = "print(tracetui.load(sys.argv[1], cache=False).summary()['verdict'])"


def _run(tmp_path, script: str) -> subprocess.CompletedProcess:
    trace = tmp_path / "bert.json"  # plain JSON: workers read the file itself
    trace.write_bytes(gzip.decompress((SAMPLES / "h100-bert-small.json.gz").read_bytes()))
    path = tmp_path / "script.py"
    path.write_text(script)
    env = {"TRACETUI_DECODE_PROCS": "2", "PATH": "/usr/bin:/bin", "TRACETUI_CACHE_DIR": str(tmp_path / "cache")}
    return subprocess.run([sys.executable, str(path), str(trace)], capture_output=True, text=True, env=env, timeout=120)


def test_an_unguarded_script_runs_once_and_is_told_why(tmp_path):
    done = _run(tmp_path, SETUP + LOAD)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("top level") == 1 and "decoded in workers" not in done.stdout
    assert "Traceback" not in done.stderr and "RuntimeError" not in done.stderr
    assert done.stderr.count('outside `if __name__ == "__main__":`') == 1


def test_a_guarded_script_decodes_in_workers(tmp_path):
    guarded = SETUP + "if __name__ == '__main__':\n" + textwrap.indent(LOAD, "    ")
    done = _run(tmp_path, guarded)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("decoded in workers") == 1 and done.stderr == ""
    assert done.stdout.count("top level") == 2  # here, and in the one worker: what is unguarded runs in each
