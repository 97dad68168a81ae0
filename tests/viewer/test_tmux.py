"""The real app in a real terminal (tmux): open a trace, see the lanes, zoom, help, quit."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from conftest import ROOT, SAMPLES, isolated_env, tmux_server_env

from tui.app.keymap import SEEN

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]


SOCKET = f"tracetui-test-{uuid.uuid4().hex[:6]}"  # a server of our own, whatever else runs tmux


def tmux(*args: str, check: bool = True, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["tmux", "-L", SOCKET, *args], capture_output=True, text=True, check=check, env=env)


def _capture(session: str) -> str:
    return tmux("capture-pane", "-p", "-t", session).stdout


def _wait_for(session: str, pattern: str, timeout: float = 90.0) -> str:  # generous: a loaded machine
    deadline = time.time() + timeout
    screen = ""
    while time.time() < deadline:
        screen = _capture(session)
        if re.search(pattern, screen):
            return screen
        time.sleep(0.2)
    raise AssertionError(f"{pattern!r} never appeared; screen was:\n{screen}")


def _shown(screen: str) -> str:
    found = re.search(r"(\S+) shown", screen)
    return found.group(1) if found else ""


def test_open_zoom_help_quit_in_tmux(tmp_path):
    """The viewer in a real terminal; its first open's legend marked seen in the test's config folder, never in the
    user's, though the tmux server was started in the user's environment."""
    session = f"tracetui-{uuid.uuid4().hex[:8]}"
    trace = SAMPLES / "b300-moe-small.json.gz"
    cmd = f"cd {ROOT} && {isolated_env()} {sys.executable} -m tui open {trace}; echo EXIT=$?; sleep 30"
    home = tmp_path / "home"  # the user's home, as the server knows it
    tmux("new-session", "-d", "-s", session, "-x", "120", "-y", "35", cmd, env=tmux_server_env(home))
    try:
        screen = _wait_for(session, r"\S+ shown[\s\S]*GPU 0 stream 7")
        assert "GPU 0 stream 7" in screen and re.search(r"CPU main thread[\s\S]* main thread · tid 238│", screen)
        before = _shown(screen)
        tmux("send-keys", "-t", session, "w", "w")
        deadline = time.time() + 60
        while _shown(_capture(session)) == before and time.time() < deadline:
            time.sleep(0.2)
        assert _shown(_capture(session)) != before
        tmux("send-keys", "-t", session, "?")
        screen = _wait_for(session, r"Keys that work here")
        assert "Zoom in" in screen and "Timeline" in screen and "TraceApp" not in screen
        tmux("send-keys", "-t", session, "i")  # the ids a keymap file remaps the keys by
        _wait_for(session, r"timeline\.zoom_in")
        tmux("send-keys", "-t", session, "Escape")
        _wait_for(session, r"1 Timeline")
        tmux("send-keys", "-t", session, "q")
        _wait_for(session, r"EXIT=0")
        assert (Path(os.environ["TRACETUI_CONFIG_DIR"]) / SEEN).is_file()  # the legend was shown, and marked here
        assert not [p for p in home.rglob("*") if "tracetui" in p.name], "the viewer wrote into the user's folders"
    finally:
        tmux("kill-server", check=False)
