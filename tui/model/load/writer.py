"""Which torch wrote a trace, where the file says so: tracetui profile's own key, or a run's embedded metadata."""

from __future__ import annotations

import re
from typing import Any

_VERSION = re.compile(r"^\d+\.\d+[\w.+-]*$")


def torch_version(top: Any) -> str:
    """The torch version a trace's top-level keys name ('' when none does): `torch_version` (tracetui profile
    adds it), else TraceLens-style metadata (`metadata.system.torch_env_info.torch_version`, or `torch==X` in its
    pip list)."""
    own = getattr(top, "torch_version", None)
    if isinstance(own, str) and _VERSION.match(own.strip()):
        return own.strip()
    system = _get(getattr(top, "metadata", None), "system")
    found = _get(_get(system, "torch_env_info"), "torch_version")
    if isinstance(found, str) and _VERSION.match(found.strip()):
        return found.strip()
    packages = _get(system, "pip_packages")
    for line in packages if isinstance(packages, list) else []:
        if isinstance(line, str) and line.startswith("torch==") and _VERSION.match(line[7:].strip()):
            return line[7:].strip()
    return ""


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else None
