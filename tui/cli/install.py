"""How to add what an optional command needs, said for how tracetui was installed: `pip install` into its own
environment, or, under pipx (whose environment pip does not reach from outside), `pipx inject tracetui ...`."""

from __future__ import annotations

import sys
from pathlib import Path

PIPX_METADATA = "pipx_metadata.json"  # pipx writes it into the root of every environment it makes (pipx's own code)
EXTRAS = {"sql": "duckdb>=1.1", "mcp": "mcp>=2,<3", "dask": "dask[distributed]>=2024.1"}  # as pyproject.toml's


def pipx_env(prefix: str | None = None) -> str | None:
    """The pipx environment's name tracetui runs in (tracetui), or None when it is not one of pipx's."""
    root = Path(prefix or sys.prefix)
    return root.name if (root / PIPX_METADATA).is_file() else None


def extra_hint(extra: str, prefix: str | None = None) -> str:
    """`pip install 'tracetui[sql]'`, or under pipx `pipx inject tracetui 'duckdb>=1.1'`."""
    env = pipx_env(prefix)
    return f"pipx inject {env} '{EXTRAS[extra]}'" if env else f"pip install 'tracetui[{extra}]'"


def torch_hint_pipx(prefix: str | None = None) -> str | None:
    """Under pipx, how to give tracetui's environment a torch (None elsewhere: profile says how itself)."""
    env = pipx_env(prefix)
    if env is None:
        return None
    return (
        f"torch is not installed; tracetui profile runs your own torch: pipx inject {env} torch (add the "
        "--index-url pytorch.org gives for this machine's CUDA, or its CPU-only one), then run it again"
    )
