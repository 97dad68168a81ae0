"""The user's settings in the config directory: a keymap that remaps bindings by id, and a marker of the legend seen.

keymap.toml (in TRACETUI_CONFIG_DIR, else the user's config directory) maps binding ids to keys:

    "timeline.zoom_in" = "i"
    "timeline.zoom_out" = "o,minus"

`?` lists each binding's id beside its keys. A file that does not parse is reported in one line
and ignored; an unknown id is reported and the others still apply.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..model import settings

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10, the default of Ubuntu 22.04 and many GPU images
    import tomli as tomllib

KEYMAP = "keymap.toml"
SEEN = "seen-legend"


def config_dir() -> Path:
    """TRACETUI_CONFIG_DIR (settings.py says a value that cannot be a folder), else the user's config folder."""
    return settings.config_dir() or settings.user_folder("config")


def load_keymap(known: set[str]) -> tuple[dict[str, str], str | None]:
    """The remapped keys by binding id (only the known ids), and a one-line problem to show (or None)."""
    path = config_dir() / KEYMAP
    if not path.is_file():
        return {}, None
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return {}, f"{path}: not read ({exc}); the default keys apply"
    keymap = {str(k): str(v) for k, v in data.items() if isinstance(v, str)}
    unknown = sorted(set(keymap) - known)
    for k in unknown:
        del keymap[k]
    problem = f"{path}: no binding has the id {', '.join(unknown)} (? lists the ids)" if unknown else None
    return keymap, problem


def legend_seen() -> bool:
    """Whether this user has been shown the timeline's legend (it is shown once, the first time it can be seen); a
    config folder that cannot be written counts as seen, so that the legend is not shown on every open."""
    marker = config_dir() / SEEN
    if marker.exists():
        return True
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return True
    return not os.access(marker.parent, os.W_OK)


def mark_legend_seen() -> None:
    """The legend has been shown: later opens leave it to the help."""
    try:
        (config_dir() / SEEN).touch()
    except OSError:
        pass
